/**
 * The chunks of a web ReadableStream, read by hand: not every browser makes the stream itself
 * async iterable. Stopping early cancels the stream, so that a response's connection or an
 * upload's file is let go.
 */
export async function* chunksOf<Chunk>(stream: ReadableStream<Chunk>): AsyncGenerator<Chunk> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
