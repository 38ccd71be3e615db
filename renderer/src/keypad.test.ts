import { describe, expect, it } from 'vitest';
import { keypadCommand, MAIN_ACTIONS } from './keypad.js';

describe('keypadCommand', () => {
  it('types a digit when focus is not in a text field', () => {
    expect(keypadCommand('5', false, false)).toEqual({ kind: 'digit', digit: '5' });
    expect(keypadCommand('0', false, true)).toEqual({ kind: 'digit', digit: '0' });
  });

  it('leaves digits and editing keys to a focused text field', () => {
    expect(keypadCommand('7', true, true)).toBeNull();
    expect(keypadCommand('Backspace', true, true)).toBeNull();
    expect(keypadCommand('Delete', true, true)).toBeNull();
  });

  it('takes Enter as the main action only when no button or field is focused', () => {
    expect(keypadCommand('Enter', false, false)).toEqual({ kind: 'main' });
    expect(keypadCommand('Enter', false, true)).toBeNull();
  });

  it('cancels with Escape everywhere, also while typing', () => {
    expect(keypadCommand('Escape', true, true)).toEqual({ kind: 'cancel' });
    expect(keypadCommand('Escape', false, false)).toEqual({ kind: 'cancel' });
  });

  it('maps Backspace to delete-last and Delete to clear', () => {
    expect(keypadCommand('Backspace', false, false)).toEqual({ kind: 'back' });
    expect(keypadCommand('Delete', false, false)).toEqual({ kind: 'clear' });
  });

  it('ignores letters and other keys', () => {
    expect(keypadCommand('a', false, false)).toBeNull();
    expect(keypadCommand('Tab', false, false)).toBeNull();
  });

  it('maps the speech keys: * repeats, # stops, + and - (or the volume keys) change the volume', () => {
    expect(keypadCommand('*', false, false)).toEqual({ kind: 'speech', command: 'repeat' });
    expect(keypadCommand('#', true, true)).toEqual({ kind: 'speech', command: 'stop' });
    expect(keypadCommand('+', false, true)).toEqual({ kind: 'speech', command: 'louder' });
    expect(keypadCommand('-', false, false)).toEqual({ kind: 'speech', command: 'softer' });
    expect(keypadCommand('AudioVolumeUp', true, true)).toEqual({ kind: 'speech', command: 'louder' });
    expect(keypadCommand('AudioVolumeDown', true, true)).toEqual({ kind: 'speech', command: 'softer' });
  });

  it('leaves + and - to a focused text field (a plate may carry a dash)', () => {
    expect(keypadCommand('-', true, true)).toBeNull();
    expect(keypadCommand('+', true, true)).toBeNull();
  });

  it('never makes a currency or duration choice the main action (gateway.md §5)', () => {
    for (const id of MAIN_ACTIONS) expect(id).not.toMatch(/dcc|duration|extend|CURRENCY/i);
  });

  it('takes the main actions in the terminal’s order, which speech names as the Enter key’s', () => {
    expect(MAIN_ACTIONS).toEqual([
      'more-time-yes',
      'action-ENTER_TICKET',
      'action-ENTER_AMOUNT',
      'action-ALT_FIELD',
      'action-CONFIRM',
      'action-START',
      'action-DONE',
    ]);
  });
});
