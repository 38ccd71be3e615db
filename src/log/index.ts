export * from './logger.js';
export { isLuhnCardNumber, redactCardNumbers, redactString, redactValue } from './redact.js';
export { LimitedWarnings } from './limited-warnings.js';
export { TokenBucket } from './token-bucket.js';
export { losingLinesWhenBroken } from './broken-output.js';
