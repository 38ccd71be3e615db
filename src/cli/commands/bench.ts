import { BENCHMARK_GROUPS } from '../../../bench/index.js';
import type { BenchResult } from '../../../bench/types.js';
import { parseCommandArgs } from '../args.js';
import { printJson, UsageError, type Command } from '../output.js';

function formatRow(r: BenchResult): string {
  const fmt = (n: number | null): string => (n === null ? '-' : n >= 100 ? n.toFixed(0) : n.toPrecision(4));
  const peer = r.peer ? `${r.peer} ${fmt(r.peerValue)} ${r.unit}` : 'no peer';
  const ratio = r.ratio === null ? '' : `  ratio ${r.ratio.toFixed(2)}x`;
  const extra = r.extra
    ? `  ${Object.entries(r.extra)
        .map(([k, v]) => `${k}=${typeof v === 'number' ? fmt(v) : v}`)
        .join(' ')}`
    : '';
  return `${r.name.padEnd(22)} ${fmt(r.ours).padStart(10)} ${r.unit.padEnd(6)} vs ${peer}${ratio}${extra}`;
}

const command: Command = {
  name: 'bench',
  summary: 'run the benchmarks, each against a named peer in the same run',
  usage: `parking-terminal bench [--only NAME] [--json] [--quick]
  --only NAME  run the benchmarks whose name starts with NAME (e.g. tlv, sale.cost)
  --json       print {"results": [{name, unit, ours, peer, peerValue, ratio}]}
  --quick      fewer iterations (smoke test of the harness; figures are not comparable)
  --list       print each benchmark's name and what it measures, its peer and what limits it
  certify.check: messages per second and CPU µs per message of certify check (JSON.parse and every rule) over
               10,000 captured messages, against Ajv (a JSON Schema of the same requests, compiled once,
               allErrors: false) and against JSON.parse of the same bytes (the floor of any validator)`,
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
