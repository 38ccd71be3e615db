import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  acceptsUpdate,
  beforeInstall,
  confirmReady,
  decideStart,
  EMPTY_RECORD,
  StartRecordFile,
  type StartRecord,
} from './update-rollback.js';

const v1 = { version: '1.0.0', path: '/var/lib/parking-terminal/app/previous.AppImage' };
const v2 = { version: '1.1.0', path: '/opt/parking-terminal/ParkingTerminal.AppImage' };

/** Starts `running` as many times as given, without READY; returns the last decision. */
function startTimes(record: StartRecord, running: string, times: number) {
  let decision = decideStart(record, running);
  for (let i = 1; i < times; i++) decision = decideStart(decision.record, running);
  return decision;
}

describe('rollback of an update that does not start', () => {
  it('runs a version without a trial as it is', () => {
    expect(decideStart(EMPTY_RECORD, '1.0.0')).toEqual({ action: 'run', record: EMPTY_RECORD });
  });

  it('counts the starts of a new version until it reaches READY, then confirms it', () => {
    const installed = beforeInstall(EMPTY_RECORD, v1, v2);
    const first = decideStart(installed, '1.1.0');
    expect(first).toMatchObject({ action: 'run', record: { trial: { version: '1.1.0', attempts: 1 } } });
    const confirmed = confirmReady(first.record, '1.1.0');
    expect(confirmed).toEqual({ good: v2, rejected: [] });
    expect(decideStart(confirmed, '1.1.0').action).toBe('run');
  });

  it('goes back to the previous version after three starts without READY, and never takes that version again', () => {
    const installed = beforeInstall(EMPTY_RECORD, v1, v2);
    expect(startTimes(installed, '1.1.0', 3).action).toBe('run');
    const fourth = startTimes(installed, '1.1.0', 4);
    expect(fourth).toMatchObject({ action: 'roll-back', to: v1 });
    expect(fourth.record).toEqual({ good: v1, rejected: ['1.1.0'] });
    expect(acceptsUpdate(fourth.record, '1.1.0')).toBe(false);
    expect(acceptsUpdate(fourth.record, '1.1.1')).toBe(true);
    // The previous version, started again, runs as before.
    expect(decideStart(fourth.record, '1.0.0').action).toBe('run');
  });

  it('has nothing to go back to without a previous version, so it keeps trying the new one', () => {
    const record: StartRecord = { trial: { ...v2, attempts: 5 }, rejected: [] };
    expect(decideStart(record, '1.1.0').action).toBe('run');
  });

  it('ignores a READY of a version that is not on trial', () => {
    const installed = beforeInstall(EMPTY_RECORD, v1, v2);
    expect(confirmReady(installed, '1.0.0')).toBe(installed);
  });

  it('keeps the record in a file, written whole, and reads a damaged one as empty', () => {
    const dir = mkdtempSync(join(tmpdir(), 'start-record-'));
    try {
      const file = new StartRecordFile(join(dir, 'start-record.json'));
      expect(file.read()).toEqual(EMPTY_RECORD);
      const record = beforeInstall(EMPTY_RECORD, v1, v2);
      file.write(record);
      expect(file.read()).toEqual(record);
      writeFileSync(join(dir, 'start-record.json'), '{not json');
      expect(file.read()).toEqual(EMPTY_RECORD);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
