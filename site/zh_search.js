/* The Chinese site's query splitter (site/zh_search.py): Latin words as Sphinx splits them, and every run of
 * Chinese characters cut into the search index's own words, the fewest words, longest first. */
const courseHan = /\p{Script=Han}+/u;

function courseIndexWord(word) {
  const index = typeof Search !== "undefined" ? Search._index : null;
  return Boolean(index) && (Object.hasOwn(index.terms, word) || Object.hasOwn(index.titleterms, word));
}

/* A run of Chinese characters as index words; a character the index lacks stays a word of its own (so the search
 * honestly finds nothing rather than quietly dropping it). */
function courseSegment(run) {
  const longest = 12;
  const best = new Array(run.length + 1).fill(null);  // best[i]: [cost, words] for run.slice(i)
  best[run.length] = [0, []];
  for (let i = run.length - 1; i >= 0; i--) {
    for (let j = Math.min(run.length, i + longest); j > i; j--) {
      const word = run.slice(i, j);
      const known = courseIndexWord(word);
      if (!known && j > i + 1) continue;
      const cost = best[j][0] + (known ? 1 : 100);
      if (best[i] === null || cost < best[i][0]) best[i] = [cost, [word, ...best[j][1]]];
    }
  }
  return best[0][1];
}

var splitQuery = (query) =>
  query
    .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)
    .filter((term) => term)
    .flatMap((term) => term.split(/(\p{Script=Han}+)/u).filter((part) => part))
    .flatMap((part) => (courseHan.test(part) ? courseSegment(part) : [part]));
