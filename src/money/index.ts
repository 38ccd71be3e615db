export * from './currency.js';
export * from './amount.js';
