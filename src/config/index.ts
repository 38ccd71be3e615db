export * from './schema.js';
export * from './load.js';
export * from './alt-methods.js';
export * from './card-wait.js';
