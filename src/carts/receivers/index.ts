// Every receiver by the name in its URL.
import type { Receiver, ReceiverName } from '../notification.js';
import { buygoods } from './buygoods.js';
import { clickbank } from './clickbank.js';
import { digistore, svencart } from './digistore.js';
import { generic } from './generic.js';
import { konnektive } from './konnektive.js';
import { stickyio } from './stickyio.js';

export const RECEIVER_BY_NAME: Record<ReceiverName, Receiver> = { clickbank, digistore, svencart, buygoods, konnektive, stickyio, generic };
