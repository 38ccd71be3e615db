import ar_AE from './catalogues/ar_AE.json' with { type: 'json' };
import de_DE from './catalogues/de_DE.json' with { type: 'json' };
import en_GB from './catalogues/en_GB.json' with { type: 'json' };
import en_US from './catalogues/en_US.json' with { type: 'json' };
import es_ES from './catalogues/es_ES.json' with { type: 'json' };
import fr_FR from './catalogues/fr_FR.json' with { type: 'json' };
import it_IT from './catalogues/it_IT.json' with { type: 'json' };
import nl_NL from './catalogues/nl_NL.json' with { type: 'json' };
import pl_PL from './catalogues/pl_PL.json' with { type: 'json' };
import type { SupportedLocale } from './locales.js';

/**
 * The message catalogues: one JSON file per locale, ICU MessageFormat messages under dotted keys
 * (`screen.presentCard.title`). en_GB is the reference: every other catalogue has exactly its keys and placeholders
 * (catalogues.test.ts fails the build otherwise).
 */

/** A key of the catalogues; the compiler knows them from en_GB. */
export type MessageKey = keyof typeof en_GB;

export type Catalogue = Readonly<Record<MessageKey, string>>;

/** Typed against en_GB, so that a catalogue missing a key does not compile either. */
export const CATALOGUES: Readonly<Record<SupportedLocale, Catalogue>> = {
  en_GB,
  en_US,
  de_DE,
  fr_FR,
  es_ES,
  it_IT,
  nl_NL,
  pl_PL,
  ar_AE,
};

export const MESSAGE_KEYS = Object.keys(en_GB) as MessageKey[];

/** Keys under `label.`: the button and field labels the renderer shows, by the rest of their key (`action.CANCEL`). */
export const LABEL_PREFIX = 'label.';
