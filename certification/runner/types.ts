/** The shapes of a run: see certification/results.ts. */
export type * from '../results.js';
