export * from './logger.js';
export { isLuhnCardNumber, redactCardNumbers, redactString, redactValue } from './redact.js';
