import type { AcdsClient, CartEventEntry } from '@acds/client';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './session';

/** The latest notifications first: the last page of the list (which runs oldest first), turned around. */
export function CartEventsTab({ client }: { client: AcdsClient }) {
  const [events, setEvents] = useState<CartEventEntry[]>();
  const [total, setTotal] = useState(0);
  const [problem, setProblem] = useState('');
  useEffect(() => {
    (async () => {
      const first = await client.cartEvents.page({}, 1);
      const last = first.totalPages > 1 ? await client.cartEvents.page({}, first.totalPages) : first;
      setTotal(first.totalEntries);
      setEvents([...last.entries].reverse());
    })().catch((error) => setProblem(messageOf(error)));
  }, [client]);
  return (
    <section aria-label="Cart events">
      <h2>Latest notifications</h2>
      {problem && (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
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
