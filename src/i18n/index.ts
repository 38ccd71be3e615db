export * from './locales.js';
export * from './catalogues.js';
export * from './translator.js';
export * from './format.js';
