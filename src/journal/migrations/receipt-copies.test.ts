import { describeEntryColumnsRewrite } from '../testing/entry-columns-rewrite.js';
import { RECEIPT_COPY_COLUMNS, receiptCopies } from './receipt-copies.js';

describeEntryColumnsRewrite('receipt copies', receiptCopies, RECEIPT_COPY_COLUMNS);
