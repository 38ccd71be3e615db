import { readFileSync } from 'node:fs';

/** Where this machine is in its boot: what no step of the wall clock moves. */
export interface BootTime {
  /** The boot's id: another after every boot. */
  readonly bootId: string;
  /** Milliseconds since the boot, time suspended included. */
  readonly sinceBootMs: number;
}

/** Reads the machine's {@link BootTime}, or undefined where the machine tells none. */
export type BootClock = () => BootTime | undefined;

/** The boot's id, read once: it cannot change while the process runs. Null where it cannot be read. */
let bootIdRead: string | null | undefined;

/**
 * The {@link BootClock} of Linux: the boot's id (`/proc/sys/kernel/random/boot_id`) and the time since it
 * (`/proc/uptime`, the boot-time clock: suspend included, never stepped by NTP or `date -s`). Undefined elsewhere, or
 * when either cannot be read.
 */
export function linuxBootClock(): BootTime | undefined {
  try {
    bootIdRead ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    bootIdRead = null;
  }
  if (bootIdRead === null) return undefined;
  try {
    const seconds = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    if (!Number.isFinite(seconds) || seconds < 0) return undefined;
    return { bootId: bootIdRead, sinceBootMs: Math.round(seconds * 1000) };
  } catch {
    return undefined;
  }
}
