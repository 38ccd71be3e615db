import {
  CardDataError,
  detectNetwork,
  luhnValid,
  maskPan,
  parseTag57,
  parseTrack1,
  parseTrack2,
  type CardData,
} from '../../emv/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, printJson, UsageError, type Command } from '../output.js';

const command: Command = {
  name: 'card',
  summary: 'parse track 1, track 2 or tag 57 card data (prints the PAN masked)',
  usage: `parking-terminal card parse (--track1 S | --track2 S | --tag57 HEX)
  prints {"pan": masked, "expiry": "YYMM", "serviceCode", "luhn": bool, "network", "cardType": "001"|"002"|null}
  cardType null: the network is not supported for parking. Malformed data exits 2 with {"error": {"code": "CARD_..."}}`,
  run(args, io) {
    const [sub, ...rest] = args;
    if (sub !== 'parse')
      throw new UsageError('BAD_ARGUMENTS', 'usage: card parse (--track1 S | --track2 S | --tag57 HEX)');
    const { values } = parseCommandArgs(
      rest,
      { track1: { type: 'string' }, track2: { type: 'string' }, tag57: { type: 'string' } },
      false,
    );
    const given = (['track1', 'track2', 'tag57'] as const).filter((k) => values[k] !== undefined);
    if (given.length !== 1)
      throw new UsageError('BAD_ARGUMENTS', 'give exactly one of --track1, --track2, --tag57');
    let card: CardData;
    try {
      card =
        values.track1 !== undefined
          ? parseTrack1(values.track1)
          : values.track2 !== undefined
            ? parseTrack2(values.track2)
            : parseTag57(values.tag57 ?? '');
    } catch (e) {
      // The message of a CardDataError never contains the card data.
      if (e instanceof CardDataError) throw new UsageError(e.code, e.message);
      throw e;
    }
    const { network, cardType } = detectNetwork(card.pan);
    printJson(io, {
      pan: maskPan(card.pan),
      expiry: card.expiry,
      serviceCode: card.serviceCode,
      luhn: luhnValid(card.pan),
      network,
      cardType,
    });
    return Promise.resolve(EXIT_OK);
  },
};
export default command;
