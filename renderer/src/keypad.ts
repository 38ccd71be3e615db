import { KEYPAD_MAIN_EVENTS, type SpeechCommand } from '../../src/host/api.js';

/**
 * The kiosk's tactile keypad (EN 301 549 5.1.6, ADA §707.6): a 12-key pad with a marked 5 and the function keys
 * Enter ○, Clear ← and Cancel ✕, wired as a keyboard. Every function of a customer screen is reachable from it:
 * - `0`–`9` type into the ticket or amount field (through the on-screen keys, so the screen sees the same presses);
 * - on a screen with no field to type digits into, `4` and `6` move to the previous and the next control in reading
 *   order, as Shift+Tab and Tab would (the tactile pad has no Tab), going round at either end: the durations, the
 *   currency choice, the other buttons and the language list are reached by keys alone; moving chooses nothing;
 * - on a screen with such a field, Clear ← with the field empty leaves it: focus goes to the next control after it
 *   (said by name), `4` and `6` then move as above (reaching "Lost ticket", the language list, the letters of the
 *   details keyboard) and any other digit types into the field again. The screen keypad's own digit keys are skipped:
 *   the tactile pad is that keypad;
 * - Enter: the screen's main action (continue, confirm, start, done; "Yes" while "Do you need more time?" is asked);
 *   a focused button or field keeps its own Enter;
 * - Backspace deletes the last character, Delete clears the field;
 * - Escape: cancel ("No" while the question is asked); with a list open (the languages) it only closes the list and
 *   focus goes back to the button that opened it;
 * - the speech keys of accessibility mode (EN 301 549 5.1.3: speech can be interrupted and repeated, volume adjusted):
 *   `*` repeats the screen (and, with accessibility mode off, turns it on: the tactile way in), `#` stops the speech,
 *   `+` and `-` (or the volume keys) make it louder or softer.
 * The keypad never chooses a currency or a duration: those are the customer's active choices (gateway.md §5).
 */

/**
 * The main action per screen, by the `data-testid` of its button; the first one present wins. The order is the
 * terminal's (KEYPAD_MAIN_EVENTS), which the speech output names as the Enter key's.
 */
export const MAIN_ACTIONS: readonly string[] = KEYPAD_MAIN_EVENTS.map((type) =>
  type === 'MORE_TIME' ? 'more-time-yes' : `action-${type}`,
);

/** What a key does on a customer screen, or null when the keypad leaves the key alone. */
export type KeypadCommand =
  | { kind: 'digit'; digit: string }
  | { kind: 'back' }
  | { kind: 'clear' }
  | { kind: 'main' }
  | { kind: 'cancel' }
  | { kind: 'speech'; command: SpeechCommand };

/**
 * The command of `key` (KeyboardEvent.key). `typing` is true while focus is in a text field, which takes digits and
 * editing keys itself; `onControl` is true while focus is on a button or field, which keeps its own Enter.
 */
export function keypadCommand(key: string, typing: boolean, onControl: boolean): KeypadCommand | null {
  if (/^[0-9]$/.test(key)) return typing ? null : { kind: 'digit', digit: key };
  switch (key) {
    case 'Backspace':
      return typing ? null : { kind: 'back' };
    case 'Delete':
      return typing ? null : { kind: 'clear' };
    case 'Enter':
      return onControl ? null : { kind: 'main' };
    case 'Escape':
      return { kind: 'cancel' };
    // No ticket or plate has these characters: the speech keys work in a field as well.
    case '*':
      return { kind: 'speech', command: 'repeat' };
    case '#':
      return { kind: 'speech', command: 'stop' };
    case 'AudioVolumeUp':
      return { kind: 'speech', command: 'louder' };
    case 'AudioVolumeDown':
      return { kind: 'speech', command: 'softer' };
    // A plate may carry a dash: in a field, + and - are typed.
    case '+':
      return typing ? null : { kind: 'speech', command: 'louder' };
    case '-':
      return typing ? null : { kind: 'speech', command: 'softer' };
    default:
      return null;
  }
}

/** The digits that move between the controls where no field takes digits: back and forward in reading order. */
const MOVE_KEYS: Readonly<Record<string, -1 | 1>> = { '4': -1, '6': 1 };

/** The screen keypads' keys: the tactile pad presses them itself, so moving to them would only be a detour. */
const SCREEN_KEYPAD_KEY = '[data-testid^="ticket-key-"], [data-testid^="amount-key-"]';

/** The field the screen's digits type into (the ticket, the amount, a detail of an alternative method), if any. */
const DIGIT_FIELD = '[data-testid="ticket-input"], [data-testid="amount-display"], [data-testid="alt-input"]';

/** The controls of `scope` Tab would reach, in reading order: shown, enabled, not inert; not the screen keypads' keys. */
function reachable(scope: ParentNode): HTMLElement[] {
  return [
    ...scope.querySelectorAll<HTMLElement>('button, input, select, textarea, a[href], [tabindex]'),
  ].filter(
    (el) =>
      el.tabIndex >= 0 &&
      !el.matches(SCREEN_KEYPAD_KEY) &&
      !(el instanceof HTMLButtonElement && el.disabled) &&
      !(el instanceof HTMLInputElement && el.disabled) &&
      !el.closest('[hidden], [inert]') &&
      el.getClientRects().length > 0,
  );
}

/**
 * Focuses the control `step` away from the focused one (the first or the last when none of `scope` is focused), going
 * round at either end; true when there was one.
 */
function move(scope: ParentNode, step: -1 | 1, moved?: (el: HTMLElement) => void): boolean {
  const controls = reachable(scope);
  if (controls.length === 0) return false;
  const at = controls.findIndex((el) => el === document.activeElement);
  const next =
    at < 0 ? (step > 0 ? 0 : controls.length - 1) : (at + step + controls.length) % controls.length;
  const target = controls[next];
  if (!target) return false;
  target.focus();
  moved?.(target);
  return true;
}

/** Focuses the first control after `field` in reading order (said by name through `moved`); true when there was one. */
function leave(scope: ParentNode, field: Element, moved?: (el: HTMLElement) => void): boolean {
  const after = reachable(scope).find(
    (el) => el !== field && (field.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
  );
  if (!after) return false;
  after.focus();
  moved?.(after);
  return true;
}

/** The digit field of `scope` and whether it is empty, or undefined when the screen has none. */
function digitField(scope: ParentNode): { field: HTMLElement; empty: boolean } | undefined {
  const field = scope.querySelector<HTMLElement>(DIGIT_FIELD);
  if (!field || field.closest('[inert]')) return undefined;
  // The amount shows 0.00 when nothing is keyed: its display says so in `data-empty`.
  const empty = field instanceof HTMLInputElement ? field.value === '' : field.dataset.empty === 'true';
  return { field, empty };
}

/** A button that can be pressed now: present, enabled and not inside an inert part of the page. */
function pressable(scope: ParentNode, testid: string): HTMLElement | null {
  const el = scope.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
  if (!el || el.closest('[inert]') || (el instanceof HTMLButtonElement && el.disabled)) return null;
  return el;
}

/**
 * Closes a list open on the screen (a button with `aria-expanded="true"` and the `aria-controls` of its list, as the
 * Language button): the button's own press closes it, and focus goes back to the button. True when one was open.
 */
function closeOpenList(scope: ParentNode): boolean {
  const opener = scope.querySelector<HTMLElement>('[aria-controls][aria-expanded="true"]');
  if (!opener || opener.closest('[inert]')) return false;
  opener.click();
  opener.focus();
  return true;
}

/**
 * Presses the on-screen control the command stands for, or, for `4` and `6` where no screen key takes the digit, moves
 * to the previous or next control (`moved` is told which); true when there was one.
 */
function run(command: KeypadCommand, scope: ParentNode, moved?: (el: HTMLElement) => void): boolean {
  const press = (...testids: string[]): boolean => {
    for (const id of testids) {
      const el = pressable(scope, id);
      if (el) {
        el.click();
        return true;
      }
    }
    return false;
  };
  switch (command.kind) {
    case 'digit': {
      if (press(`ticket-key-${command.digit}`, `amount-key-${command.digit}`, `alt-key-${command.digit}`))
        return true;
      const step = MOVE_KEYS[command.digit];
      return step !== undefined && move(scope, step, moved);
    }
    case 'back':
      return press('ticket-key-back', 'amount-key-back', 'alt-key-back');
    case 'clear':
      return press('ticket-key-clear', 'amount-key-clear', 'alt-key-clear');
    case 'main':
      return press(...MAIN_ACTIONS);
    case 'cancel':
      return closeOpenList(scope) || press('more-time-no', 'action-CANCEL');
    case 'speech':
      return false;
  }
}

/** The keypad listening on the document; `reset` is for a new screen. */
export interface Keypad {
  /** A new screen: its digits type into its field again (a field left with Clear stays left only on its screen). */
  reset(): void;
}

/**
 * Listens for keypad keys on the document and presses the matching control of the customer area `slot`. Keys typed
 * elsewhere (the operator panel) are not the customer's and are left alone; while the "more time" dialog is open only
 * its own buttons answer. `moved` is told of each control `4`, `6` or the leaving Clear moved to (the input echo, the
 * customer's activity).
 */
export function installKeypad(
  slot: HTMLElement,
  speech?: (command: SpeechCommand) => boolean,
  moved?: (el: HTMLElement) => void,
): Keypad {
  /** Whether the customer left the screen's digit field with Clear: `4` and `6` move until another digit. */
  let left = false;
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey || e.defaultPrevented) return;
    const target = e.target;
    const inCustomerArea =
      target === document.body ||
      target === document.documentElement ||
      (target instanceof Node && slot.contains(target));
    if (!inCustomerArea) return;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement;
    const onControl = typing || target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement;
    const dialog = slot.querySelector<HTMLElement>('[role="alertdialog"]');
    const scope = dialog ?? slot;
    const field = dialog ? undefined : digitField(slot);
    if (field && left && /^[0-9]$/.test(e.key)) {
      const step = MOVE_KEYS[e.key];
      if (step !== undefined) {
        if (move(scope, step, moved)) e.preventDefault();
        return;
      }
      // Any other digit goes back into the field (its Enter is the screen's main action) and types there.
      left = false;
      if (field.field instanceof HTMLInputElement) field.field.focus();
      else if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    } else if (field && !left && e.key === 'Backspace' && field.empty) {
      left = leave(scope, field.field, moved);
      if (left) e.preventDefault();
      return;
    }
    const command = keypadCommand(e.key, typing, onControl);
    if (!command) return;
    // Speech keys act on the whole screen, the "more time" question included.
    if (command.kind === 'speech') {
      if (speech?.(command.command)) e.preventDefault();
      return;
    }
    if (run(command, scope, moved)) e.preventDefault();
  });
  return {
    reset: () => {
      left = false;
    },
  };
}
