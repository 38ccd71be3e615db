import {
  describeRule,
  NETWORK_BY_CARD_TYPE,
  NETWORK_TAG_TABLE,
  NEVER_SEND_TAGS,
  presenceOf,
  TAG_SET_SERVICES,
  tagDefinition,
  type CardType,
} from '../../emv/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, printJson, UsageError, type Command } from '../output.js';

function tableFor(cardType: CardType): unknown {
  return {
    cardType,
    network: NETWORK_BY_CARD_TYPE[cardType],
    rows: NETWORK_TAG_TABLE.map((row) => ({
      tag: row.tag,
      element: row.element,
      rule: describeRule(row.rules[cardType]),
      presence: Object.fromEntries(TAG_SET_SERVICES.map((s) => [s, presenceOf(row, cardType, s)])),
    })),
  };
}

const command: Command = {
  name: 'emv',
  summary: 'print the EMV tag tables in use (spec 001, per network) and the never-send list',
  usage: `parking-terminal emv table [--network 001|002]
  prints {"source", "networks": [{"cardType", "network", "rows": [{"tag", "element", "rule", "presence": {service: "M"|"O"|"P"|"C"}}]}],
          "neverSend": [{"tag", "name"}]}`,
  run(args, io) {
    const [sub, ...rest] = args;
    if (sub !== 'table') throw new UsageError('BAD_ARGUMENTS', 'usage: emv table [--network 001|002]');
    const { values } = parseCommandArgs(rest, { network: { type: 'string' } }, false);
    const network = values.network;
    if (network !== undefined && network !== '001' && network !== '002')
      throw new UsageError('BAD_ARGUMENTS', '--network must be 001 or 002');
    const cardTypes: CardType[] = network !== undefined ? [network] : ['002', '001'];
    printJson(io, {
      source: 'spec 001 "Card-present parking", EMV tags; gateway.md §3 never-send list',
      networks: cardTypes.map(tableFor),
      neverSend: [...NEVER_SEND_TAGS].map((tag) => ({ tag, name: tagDefinition(tag)?.name ?? tag })),
    });
    return Promise.resolve(EXIT_OK);
  },
};
export default command;
