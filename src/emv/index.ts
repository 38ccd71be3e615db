/** EMV and card data: the public surface of src/emv (DESIGN.md layout). */
export * from './errors.js';
export * from './hex.js';
export * from './tlv.js';
export * from './pan.js';
export * from './dictionary.js';
export * from './networks.js';
export * from './tagset.js';
export * from './card.js';
export * from './card-numbers-in-text.js';
export * from './local-time.js';
