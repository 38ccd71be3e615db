import { BENCHMARK_GROUPS } from '../../../bench/index.js';
import type { BenchResult } from '../../../bench/types.js';
import { parseCommandArgs } from '../args.js';
import { printJson, UsageError, type Command } from '../output.js';

function formatRow(r: BenchResult): string {
  const fmt = (n: number | null): string => (n === null ? '-' : n >= 100 ? n.toFixed(0) : n.toPrecision(4));
  const peer = r.peer ? `${r.peer} ${fmt(r.peerValue)} ${r.unit}` : 'no peer';
  const ratio = r.ratio === null ? '' : `  ratio ${r.ratio.toFixed(2)}x`;
  const cpu =
    r.cpuMicrosPerOp === undefined
      ? ''
      : `  cpu ${fmt(r.cpuMicrosPerOp)} µs/op${r.peerCpuMicrosPerOp === undefined ? '' : ` (peer ${fmt(r.peerCpuMicrosPerOp)})`}`;
  const limit = r.limit ? `  limit ${fmt(r.limit.value)} ${r.limit.unit} (${r.limit.what})` : '';
  const extra = r.extra
    ? `  ${Object.entries(r.extra)
        .map(([k, v]) => `${k}=${typeof v === 'number' ? fmt(v) : v}`)
        .join(' ')}`
    : '';
  return `${r.name.padEnd(22)} ${fmt(r.ours).padStart(10)} ${r.unit.padEnd(6)} vs ${peer}${ratio}${cpu}${limit}${extra}`;
}

const command: Command = {
  name: 'bench',
  summary: 'run the benchmarks, each against a named peer in the same run',
  usage: `parking-terminal bench [--only NAME] [--json] [--quick]
  --only NAME  run the benchmarks whose name starts with NAME (e.g. tlv, sale.cost)
  --json       print {"results": [{name, unit, ours, peer, peerValue, ratio, cpuMicrosPerOp?, peerCpuMicrosPerOp?,
               limit?: {what, value, unit}, extra?}]}
  --quick      fewer iterations (smoke test of the harness; figures are not comparable)
  --list       print each benchmark's name and what it measures, its peer and what limits it
Each figure is measured against its peer at the peer's best setting in the same run (ratio > 1: better than the
peer), with the CPU time per operation and, where one applies, the physical limit it is measured against:
  sale.cost: median ms of one unattended sale (tag set, request, signature, the durable journal write before sending
               and the one after, the HTTP round trip to the sandbox in its own process), p99 in extra; peer: the
               round trip alone. Limit: the round trip plus two fdatasync on this disk (fsyncMicros), the cost of the
               money rules; sqliteFloorMs: the round trip made between SQLite's own two commits of such rows on
               this disk, as a sale makes it (a bare insert before, the outcome update after, once the write-ahead
               log is reused as the journal's is; the same commits in a tight loop, which cost less, in
               sqlite*InALoopMicros), and overheadOverSqliteFloorMs what the terminal adds beyond.
               Limits of the p99: sqliteFloorP99Ms, the p99 of that bare sale; bareExchangeP99Ms, the p99 of the
               sale's bytes over a raw keep-alive socket to a
               canned server in its own process, interleaved with the sales: the tail of one local exchange here;
               stallsPerSecond, longestStallMs: how often and how long a thread that only reads the clock for 2 s
               loses its CPU for more than 0.2 ms. Measured after 1,000 unmeasured sales (the JIT of this process and
               of the sandbox's settle).
  journal.append: durable appends per second, 1 caller waiting for its own write (headline) and 4, 16, 32 in flight
               sharing group commits; peer: a bare better-sqlite3 insert of the same row (the journal's columns: a
               request's length, not its bytes), same durability (WAL, synchronous=FULL), one commit per row alone
               or as many rows per transaction as arrive together; the sides take turns in chunks after 500
               unmeasured appends each. Limit: one fdatasync per commit (1e6 / fsyncMicros per second; N in flight,
               N times that).
  journal.lookups: µs per set of the journal's reads for a payment and an operator snapshot (the status counts, a
               transactionId that is not there, the oldest sale by its transactionId, the authorized total of the
               oldest pre-authorization with its increments) on a journal of 200,000 entries; peer: the same reads on
               a journal of 1,000. Each read is an index search (B-tree depth grows with the log of the entries): a
               ratio near 1 says no read grows with the journal.
  queue.forward: seconds to forward 10,000 stored payments, 32 in flight, each claimed (journaled and marked sent
               in one durable commit just before its send), sent and completed; peer: the same sends without journal
               or queue, to the same sandbox in its own process; the sides take turns in five chunks of 2,000,
               each first in every other one, after two unmeasured turns of 1,000 each. Limited by the pages the
               two durable steps of each forward write, shared by group commit (commitsPerPayment in extra), and by
               the round trips. withoutBackgroundWait…: the same forwards, taking turns with ours, with
               journal.groupCommit.backgroundWaitMs 0. journalOnlyCpuMicrosPerPayment: 5,000 more forwarded through
               the same queue and journal but answered in process without HTTP, the journal's share alone
               (journalOnlyCpuLimitPaymentsPerSec: 1e6 / that, what the journal alone could forward on one core).
  gateway.authorize: authorizations per second to the sandbox in a child process, 16 in flight; peer: the official
               SDK at its cheapest setting (no-op external logger; its default settings in extra). Limited by the
               sandbox's CPU (sandboxCpuMicrosPerRequest); our client's CPU µs per request is the figure to read,
               for each mode in extra: one at a time (a terminal's sale; each request also pays for waking the
               sandbox's process over loopback and for caches that process cooled) and 16 in flight. Each client
               runs in a process of its own, as in a terminal. Measured after four unmeasured rounds of each client
               in both modes (4,000 requests: a JIT reaches its steady cost only after a few thousand); their CPU
               per request, ours and the SDK's, in warmUpOursCpuMicrosPerRequest and
               warmUpPeerQuietLoggerCpuMicrosPerRequest.
  gateway.throughput: the same authorizations against a canned server in its own process, so the client sets the
               pace; peer: the SDK at its cheapest setting against the same server. Limited by the client's CPU on one
               core (clientLimitReqPerSec); limit: the same bytes over raw keep-alive sockets, read as far as HTTP
               framing needs (bareExchangeCpuMicrosPerRequest: the kernel's and event loop's cost per request).
               Each client runs in a process of its own, as in a terminal (no shared heap or JIT; each process's
               CPU is its client's alone), rounds taking turns, after three unmeasured rounds of each.
  sandbox.throughput: authorizations per second the sandbox answers to 50 clients, and its CPU µs per request
               (read from /proc); peer: node:http answering a canned 201. Limited by the sandbox's verification,
               validation and ledger.
  tlv.decode, tlv.encode: ops/s and CPU µs per op on a 258-byte field 55; peers node-tlv and ber-tlv at their
               only setting. CPU-bound: the CPU µs per op is the figure.
  certify.check: messages per second and CPU µs per message of certify check (JSON.parse and every rule) over
               10,000 captured messages, against Ajv (a JSON Schema of the same requests, compiled once,
               allErrors: false) and against JSON.parse of the same bytes, which is also its limit (the floor of
               any validator of them)
  fleet.heartbeats: heartbeats per second one Mosquitto takes from 200 terminals running the real fleet link, and
               this process's CPU µs per heartbeat (the links' and the operator's subscriber's); peer: bare MQTT.js
               clients publishing the same bytes. Skipped without Mosquitto`,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        only: { type: 'string' },
        json: { type: 'boolean' },
        quick: { type: 'boolean' },
        list: { type: 'boolean' },
      },
      false,
    );
    const only = values.only;
    const groups = await Promise.all(BENCHMARK_GROUPS.map((load) => load()));
    if (values.list) {
      for (const b of groups.flatMap((g) => g.benchmarks))
        io.stdout.write(`${b.name}\n${b.description ? `  ${b.description}\n` : ''}`);
      return 0;
    }
    const selected = groups
      .flatMap((g) => g.benchmarks)
      .filter((b) => !only || b.name === only || b.name.startsWith(`${only}.`) || b.name.startsWith(only));
    if (selected.length === 0) throw new UsageError('BENCH_UNKNOWN', `no benchmark matches "${only ?? ''}"`);
    const results: BenchResult[] = [];
    for (const b of selected) {
      const rows = await b.run({ quick: values.quick === true });
      results.push(...rows);
      if (!values.json) for (const r of rows) io.stdout.write(`${formatRow(r)}\n`);
    }
    if (values.json) printJson(io, { results });
    return 0;
  },
};
export default command;
