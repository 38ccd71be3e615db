export * from './errors.js';
export * from './encryption.js';
export * from './journal.js';
export * from './recovery.js';
export * from './services.js';
export { migrate, schemaVersion, LATEST_VERSION, MIGRATIONS, type Migration } from './migrations/index.js';
export * from './offline-queue.js';
