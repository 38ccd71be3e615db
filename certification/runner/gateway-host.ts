/**
 * The test host a run talks to: the embedded sandbox (one fresh per case, so that each case's ledger is its own) or a
 * host given by URL. Faults are injected through the sandbox's admin endpoints when the host has them; a test host
 * without them cannot run the timeout cases, which are then reported as skipped, never dropped.
 */
import { silentLogger, type Logger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import type { PackFault } from '../pack/schema.js';

export interface TestHost {
  /** Base URL the terminal's client is pointed at. */
  readonly url: string;
  /**
   * Whether it is the embedded sandbox, made for this run: the runner then shortens the journal's waits (a timeout
   * reversal 0.5 s after the original). Any host given by URL gets the configured waits (gateway.md §2: 60 s).
   */
  readonly embedded: boolean;
  /** Whether faults can be injected (embedded sandbox, or a host answering `/__sandbox/faults`). */
  readonly canInjectFaults: boolean;
  scheduleFaults(faults: readonly PackFault[]): Promise<void>;
  /** The host's own view of the case: open authorizations, amounts that do not add up (embedded sandbox only). */
  consistencyProblems(): Promise<string[] | undefined>;
  close(): Promise<void>;
}

/** A fresh embedded sandbox. */
export async function embeddedHost(logger: Logger = silentLogger()): Promise<TestHost> {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger });
  return {
    url: sandbox.url,
    embedded: true,
    canInjectFaults: true,
    scheduleFaults(faults) {
      sandbox.scheduleFaults(faults.map((f) => ({ ...f })));
      return Promise.resolve();
    },
    consistencyProblems() {
      const report = sandbox.consistency({ requireResolved: true });
      return Promise.resolve(report.problems.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))));
    },
    close: () => sandbox.close(),
  };
}

/** A host given by URL; asks once whether it has the sandbox's admin endpoints. */
export async function remoteHost(url: string): Promise<TestHost> {
  const base = url.replace(/\/+$/, '');
  let admin = false;
  try {
    const r = await fetch(`${base}/__sandbox/health`, { signal: AbortSignal.timeout(3_000) });
    admin = r.ok;
    await r.body?.cancel();
  } catch {
    admin = false;
  }
  return {
    url: base,
    embedded: false,
    canInjectFaults: admin,
    async scheduleFaults(faults) {
      if (!admin) throw new Error(`${base} cannot inject faults`);
      const r = await fetch(`${base}/__sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ faults }),
        signal: AbortSignal.timeout(5_000),
      });
      if (!r.ok) throw new Error(`${base}/__sandbox/faults answered ${r.status}: ${await r.text()}`);
    },
    consistencyProblems() {
      // A shared test host holds other cases' transactions too: its ledger is not this case's to judge.
      return Promise.resolve(undefined);
    },
    close: () => Promise.resolve(),
  };
}
