import { join } from 'node:path';
import { createReader, type CardRead } from '../../devices/index.js';
import { parseConfig, type Config } from '../config/index.js';
import { createAuthenticator, createGatewayClient, type GatewayClient } from '../gateway/index.js';
import {
  AuthorizationDataStore,
  JournaledSender,
  openJournal,
  type SqliteJournal,
} from '../journal/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { CardStore } from './card-store.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { gatewayTransmitter } from './gateway-adapters.js';
import { PaymentService } from './payments.js';
import { SANDBOX_SHARED_SECRET } from './terminal-host.js';

/** A payment service with what it sends through and keeps, without the host around it. */
export interface StandalonePayments {
  readonly config: Config;
  readonly payments: PaymentService;
  readonly cards: CardStore;
  readonly gateway: GatewayClient;
  readonly journal: SqliteJournal;
  /** A read of the simulated reader's card for `amountMinor` (read once per amount; a fresh copy each call). */
  readonly readCard: (amountMinor: number) => Promise<CardRead>;
  /** Lets go of a held card as the host does when a flow ends (src/host/flow-effects.ts). */
  readonly release: (cardRef: string) => void;
  readonly close: () => Promise<void>;
}

/**
 * The payment service of the default configuration against the gateway at `gatewayUrl` (the sandbox's credentials),
 * with its journal in `dir`, the simulated reader, and no-op health: what the sale benchmark measures and the
 * service's tests drive. The caller owns `dir`.
 */
export async function standalonePayments(options: {
  gatewayUrl: string;
  dir: string;
  logger?: Logger;
}): Promise<StandalonePayments> {
  const logger = options.logger ?? silentLogger();
  const config = parseConfig({ journal: { path: join(options.dir, 'journal.db') } });
  const gateway = createGatewayClient({
    baseUrl: options.gatewayUrl,
    merchantId: config.gateway.merchantId,
    auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      defaultSharedSecret: SANDBOX_SHARED_SECRET,
    }),
    timeouts: config.gateway.timeouts,
    logger,
  });
  const key = Buffer.alloc(32, 5);
  const journal = openJournal(config.journal.path, { logger });
  const cards = new CardStore(Buffer.alloc(32, 7));
  const payments = new PaymentService({
    config,
    gateway,
    sender: new JournaledSender(journal, gatewayTransmitter(gateway)),
    journal,
    cards,
    logger,
    now: () => new Date(),
    followOns: journalFollowOnStore(new AuthorizationDataStore(journal, key), 'A'),
    health: { gatewayAnswered: () => undefined, gatewayUnreachable: () => undefined },
  });
  const reader = createReader(
    { ...config.reader, sim: { ...config.reader.sim, presentDelayMs: 0 } },
    { logger, timeZone: config.terminal.timezone },
  );
  await reader.connect();
  const reads = new Map<number, CardRead>();
  return {
    config,
    payments,
    cards,
    gateway,
    journal,
    readCard: async (amountMinor) => {
      let read = reads.get(amountMinor);
      if (read === undefined) {
        read = await reader.activate({
          amountMinor,
          otherAmountMinor: 0,
          currencyNumeric: '826',
          countryNumeric: '826',
          transactionType: '00',
          timeoutSeconds: 30,
        });
        reads.set(amountMinor, read);
      }
      return { ...read, tlvs: read.tlvs.map((t) => ({ tag: t.tag, value: Uint8Array.from(t.value) })) };
    },
    release: (cardRef) => {
      cards.release(cardRef);
      payments.forgetCard(cardRef);
    },
    close: async () => {
      await reader.close();
      await gateway.close();
      journal.close();
    },
  };
}
