import { useEffect, useState } from 'preact/hooks';

/** What to show a person for a failure: the API's own message (AcdsError's), or the error's. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface Answer<T> {
  value?: T;
  problem?: string;
  loading: boolean;
}

/**
 * What `load` answers for the current `deps`. When they change the answer is dropped at once and
 * the request for the old ones aborted, so that nothing is ever shown for parameters it was not
 * asked with.
 */
export function useAnswer<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Answer<T> {
  const [answer, setAnswer] = useState<Answer<T>>({ loading: true });
  useEffect(() => {
    const controller = new AbortController();
    const settle = (settled: Answer<T>) => controller.signal.aborted || setAnswer(settled);
    setAnswer({ loading: true });
    // Through a promise, so that a load that throws at once (a query given twice) is shown too.
    Promise.resolve()
      .then(() => load(controller.signal))
      .then(
        (value) => settle({ value, loading: false }),
        (error: unknown) => settle({ problem: messageOf(error), loading: false }),
      );
    return () => controller.abort();
  }, deps);
  return answer;
}

/** The API's message for a failure, where a person reads it. */
export function Problem({ text }: { text: string | undefined }) {
  return text ? <p role="alert">{text}</p> : null;
}
