export * from './logger.js';
export { redactString, redactValue } from './redact.js';
