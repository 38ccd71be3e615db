export * from './currency.js';
export * from './amount.js';
export * from './rate.js';
