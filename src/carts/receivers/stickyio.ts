// Sticky.io "Post Back URL" profiles: a GET, POST or PUT to a URL built from tokens the seller
// picks, fired on order types or actions. Sticky.io signs nothing: the secret token in the URL
// is the only check. Its postbacks are read as Konnektive's, with Sticky.io's names for our fields.
import type { Receiver } from '../notification.js';
import { type FieldSources, UNSIGNED_REPLIES } from './fields.js';
import { readPostback } from './konnektive.js';

/** Sticky.io's order fields for our fields, read after ours. */
const STICKY_NAMES: FieldSources = {
  receipt: ['order_id'],
  amount: ['order_total'],
  tax_amount: ['order_sales_tax_amount', 'tax'],
  email: ['email_address'],
  zip_code: ['zip', 'billing_postcode'],
  country: ['billing_country'],
  affiliate: ['afid', 'affid'],
  tracking_codes: ['sid', 'c1', 'c2', 'c3', 'opt', 'click_id'],
};

export const stickyio: Receiver = {
  name: 'stickyio',
  methods: ['GET', 'POST', 'PUT'],
  needsSecret: false,
  // CBSplit's Sticky.io connector carries the funnel's values in custom fields of these names.
  read: (request) => readPostback(request, 'stickyio', STICKY_NAMES, { user_id: 'original_user_id', page_id: 'cbs_page_id', page_version: 'cbs_page_version' }),
  ...UNSIGNED_REPLIES,
};
