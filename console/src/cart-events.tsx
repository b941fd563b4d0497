import type { AcdsClient } from '@acds/client';
import { Problem, useAnswer } from './answer';
import { counted } from './conversions';

const LATEST = 100;

/**
 * The carts connected and the path each notifies (the token shown only by its first characters),
 * then the latest notifications first: the list runs oldest first, so its last 100 are read from its
 * last page and, when that one is not full, the page before it, and turned around.
 */
export function CartEventsTab({ client }: { client: AcdsClient }) {
  const receivers = useAnswer((signal) => client.cartReceivers.list({ signal }), [client]);
  const events = useAnswer(
    async (signal) => {
      const first = await client.cartEvents.page({}, 1, { signal });
      if (first.totalPages <= 1) return { total: first.totalEntries, latest: first.entries.slice().reverse() };
      const last = await client.cartEvents.page({}, first.totalPages, { signal });
      const before = first.totalPages === 2 ? first : await client.cartEvents.page({}, first.totalPages - 1, { signal });
      return { total: last.totalEntries, latest: [...before.entries, ...last.entries].slice(-LATEST).reverse() };
    },
    [client],
  );
  return (
    <section aria-label="Cart events">
      <Problem text={receivers.problem ?? events.problem} />
      <h2>Connected carts</h2>
      {receivers.value?.length === 0 && <p class="hint">No cart is connected: on the service's host, npm run cli -- carts connect CART connects one.</p>}
      {receivers.value && receivers.value.length > 0 && (
        <div class="table-frame">
          <table aria-label="Connected carts">
            <thead>
              <tr>
                <th scope="col">Cart</th>
                <th scope="col">Notification URL path</th>
                <th scope="col">Connected</th>
              </tr>
            </thead>
            <tbody>
              {receivers.value.map((receiver) => (
                <tr key={receiver.cart}>
                  <th scope="row">{receiver.cart}</th>
                  <td>
                    <code>{receiver.path}</code>
                  </td>
                  <td>{receiver.connected_at}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Latest notifications</h2>
      <p>{events.value ? `${counted(events.value.total, 'notification')} received` : 'Loading…'}</p>
      <div class="table-frame">
        <table aria-label="Latest notifications">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Cart</th>
              <th scope="col">Event</th>
              <th scope="col">Cart's name</th>
              <th scope="col">Receipt</th>
              <th scope="col">Test</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {(events.value?.latest ?? []).map((event) => (
              <tr key={event.id}>
                <td>{event.received_at}</td>
                <td>{event.cart}</td>
                <td>{event.event}</td>
                <td>{event.cart_event}</td>
                <td>{event.receipt ?? ''}</td>
                <td>{event.test ? 'test' : ''}</td>
                <td title={event.problem ?? undefined}>{event.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
