/** The rules of `certify check`, by category (certification/rules, DESIGN.md layout). */
export { RULES, finding, tagField, type RuleDefinition, type RuleId } from './catalog.js';
export { checkDataElements } from './data-element.js';
export { checkCrossEdits } from './cross-edit.js';
export { checkInterchange } from './interchange.js';
export { checkDataMapping } from './data-mapping.js';
export { checkDcc } from './dcc.js';
export { viewMessage, type MessageView } from './message.js';
export { SessionState } from './session-state.js';
