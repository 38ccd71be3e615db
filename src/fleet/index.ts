export * from './command-signature.js';
export * from './connection.js';
export * from './fleet-view.js';
export * from './link.js';
export * from './maintenance.js';
export * from './messages.js';
export * from './terminal.js';
export * from './topics.js';
