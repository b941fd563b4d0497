/**
 * The RFC 8288 Link header of a list page: `first`, `prev`, `next` and `last`, each the request's
 * own path and query with only `page` changed, relative to the request (so that they hold behind
 * any proxy or prefix). Undefined when nothing matches.
 */
export function pageLinks(url: string, page: number, totalPages: number): string | undefined {
  if (totalPages === 0) return undefined;
  const mark = url.indexOf('?');
  const [path, query] = mark === -1 ? [url, ''] : [url.slice(0, mark), url.slice(mark + 1)];
  const toPage = (target: number) => {
    const params = new URLSearchParams(query);
    params.set('page', String(target));
    return `<${path}?${params.toString()}>`;
  };
  const links = [`${toPage(1)}; rel="first"`];
  if (page > 1) links.push(`${toPage(Math.min(page - 1, totalPages))}; rel="prev"`);
  if (page < totalPages) links.push(`${toPage(page + 1)}; rel="next"`);
  links.push(`${toPage(totalPages)}; rel="last"`);
  return links.join(', ');
}
