import { describeEntryColumnsRewrite } from '../testing/entry-columns-rewrite.js';
import { RECEIPT_FACT_COLUMNS, receiptFacts } from './receipt-facts.js';

describeEntryColumnsRewrite('receipt facts', receiptFacts, RECEIPT_FACT_COLUMNS);
