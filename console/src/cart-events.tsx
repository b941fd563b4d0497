import type { AcdsClient, CartEventEntry, CartReceiverEntry } from '@acds/client';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './session';

/**
 * The carts connected and the path each notifies (the token shown only by its first characters),
 * then the latest notifications first: the last page of the list, which runs oldest first, turned around.
 */
export function CartEventsTab({ client }: { client: AcdsClient }) {
  const [receivers, setReceivers] = useState<CartReceiverEntry[]>();
  const [events, setEvents] = useState<CartEventEntry[]>();
  const [total, setTotal] = useState(0);
  const [problem, setProblem] = useState('');
  useEffect(() => {
    client.cartReceivers
      .list()
      .then(setReceivers)
      .catch((error) => setProblem(messageOf(error)));
    (async () => {
      const first = await client.cartEvents.page({}, 1);
      const last = first.totalPages > 1 ? await client.cartEvents.page({}, first.totalPages) : first;
      setTotal(first.totalEntries);
      setEvents([...last.entries].reverse());
    })().catch((error) => setProblem(messageOf(error)));
  }, [client]);
  return (
    <section aria-label="Cart events">
      {problem && (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
      <h2>Connected carts</h2>
      {receivers?.length === 0 && <p class="hint">No cart is connected: `acds carts connect CART` connects one (docs/carts.md).</p>}
      {receivers && receivers.length > 0 && (
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
              {receivers.map((receiver) => (
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
      <p>{events ? `${total.toLocaleString()} notification${total === 1 ? '' : 's'} received` : 'Loading…'}</p>
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
            {events?.map((event) => (
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
