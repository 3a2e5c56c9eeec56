'use strict';
// The report's only script (allowed by its hash in the page's Content-Security-Policy). The
// page is complete without it; this adds paging, the filters and the side-by-side view. Texts
// and ids are only ever set as text (textContent, text nodes), never parsed as HTML.
document.documentElement.classList.add('paged');
document.addEventListener('DOMContentLoaded', () => {
  document.documentElement.dataset.parsed = String(Math.round(performance.now()));
  try {
    start();
  } catch (error) {
    // A page that cannot be driven stays readable as it is.
    document.documentElement.classList.remove('paged');
    document.documentElement.dataset.error = String(error);
  }
});

const STORIES_PER_PAGE = 50;
const MEMBERS_PER_PAGE = 100;

function start() {
  const data = JSON.parse(document.getElementById('data').textContent);
  const list = document.getElementById('stories');
  // Each story is a <details> (two or more documents) or a <p> (one); each member has one
  // lead, of class t or tm, in document order.
  const stories = Array.from(list.children);
  const leads = list.querySelectorAll('.t, .tm');
  const firstLead = [];
  let at = 0;
  for (const members of data.s) {
    firstLead.push(at);
    at += members.length;
  }
  if (stories.length !== data.s.length || leads.length !== at) {
    throw new Error('the page and its data do not match');
  }
  const $ = (id) => document.getElementById(id);
  const controls = $('controls');
  const view = $('view');
  const state = { q: '', size: 1, sim: null, loose: false, page: 1, view: null, open: [] };
  let haystack = null;
  let shown = [];
  let matching = [];
  const memberPage = new Map();

  // A member's kept text: its lead as the page shows it (a row's end of line left out: a
  // lead ends with a word), then the rest of its words from the data.
  const text = (s, m) => {
    const lead = leads[firstLead[s] + m].textContent;
    return (lead.endsWith('\n') ? lead.slice(0, -1) : lead) + (data.s[s][m][3] || '');
  };
  const loose = (member) => (member[2] || 0) >= 2;

  function search(s) {
    if (haystack === null) {
      haystack = data.s.map((members, i) =>
        members.map((m, j) => m[0] + '\u0001' + text(i, j)).join('\u0001').toLowerCase());
    }
    return haystack[s];
  }

  function passes(s, q) {
    const members = data.s[s];
    if (members.length < state.size) return false;
    if (state.loose && !members.some(loose)) return false;
    if (state.sim !== null &&
        !members.slice(1).some((m) => typeof m[1] === 'number' && m[1] <= state.sim)) return false;
    return q === '' || search(s).includes(q);
  }

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    state.q = p.get('q') || '';
    state.size = Math.max(1, parseInt(p.get('size') || '1', 10) || 1);
    const sim = parseFloat(p.get('sim') || '');
    state.sim = Number.isFinite(sim) ? sim : null;
    state.loose = p.get('loose') === '1';
    state.page = Math.max(1, parseInt(p.get('page') || '1', 10) || 1);
    const v = (p.get('view') || '').split('.').map((x) => parseInt(x, 10));
    state.view = v.length === 2 && v.every(Number.isInteger) ? v : null;
    // Stories to open, by number: `open=0,3`.
    state.open = (p.get('open') || '').split(',').map((x) => parseInt(x, 10))
      .filter((s) => Number.isInteger(s) && s >= 0 && s < stories.length);
    $('q').value = state.q;
    $('size').value = String(state.size);
    $('sim').value = state.sim === null ? '' : String(state.sim);
    $('loose').checked = state.loose;
  }

  function writeHash() {
    const p = new URLSearchParams();
    if (state.q) p.set('q', state.q);
    if (state.size > 1) p.set('size', String(state.size));
    if (state.sim !== null) p.set('sim', String(state.sim));
    if (state.loose) p.set('loose', '1');
    if (state.page > 1) p.set('page', String(state.page));
    if (state.view) p.set('view', state.view.join('.'));
    if (state.open.length) p.set('open', state.open.join(','));
    const hash = p.toString();
    if (location.hash.slice(1) === hash) return;
    try {
      history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search);
    } catch (e) {
      location.replace('#' + hash);
    }
  }

  function apply() {
    const q = state.q.trim().toLowerCase();
    matching = [];
    for (let s = 0; s < stories.length; s++) if (passes(s, q)) matching.push(s);
    const pages = Math.max(1, Math.ceil(matching.length / STORIES_PER_PAGE));
    state.page = Math.min(state.page, pages);
    for (const s of shown) {
      stories[s].classList.remove('on', 'hit');
      stories[s].querySelectorAll('.hit').forEach((e) => e.classList.remove('hit'));
    }
    shown = matching.slice((state.page - 1) * STORIES_PER_PAGE, state.page * STORIES_PER_PAGE);
    for (const s of state.open) stories[s].open = true;
    for (const s of shown) {
      stories[s].classList.add('on');
      stories[s].querySelectorAll('tr.m').forEach((row) => { row.tabIndex = 0; });
      if (q !== '') markHits(s, q);
      if (stories[s].classList.contains('long')) pageMembers(s);
    }
    const first = matching.length ? (state.page - 1) * STORIES_PER_PAGE + 1 : 0;
    const last = Math.min(matching.length, state.page * STORIES_PER_PAGE);
    const n = (x) => x.toLocaleString('en');
    $('count').textContent = matching.length === stories.length
      ? `stories ${n(first)}–${n(last)} of ${n(stories.length)}`
      : `stories ${n(first)}–${n(last)} of ${n(matching.length)} matching (${n(stories.length)} in all)`;
    $('pageinfo').textContent = `page ${n(state.page)} of ${n(pages)}`;
    $('prev').disabled = state.page <= 1;
    $('next').disabled = state.page >= pages;
    writeHash();
  }

  function markHits(s, q) {
    const members = data.s[s];
    let firstHit = -1;
    members.forEach((m, j) => {
      if ((m[0] + '\u0001' + text(s, j)).toLowerCase().includes(q)) {
        if (firstHit < 0) firstHit = j;
        const row = leads[firstLead[s] + j].closest('tr, summary, p');
        if (row) row.classList.add('hit');
      }
    });
    if (members.length > 1 && firstHit >= 0) {
      stories[s].open = true;
      if (stories[s].classList.contains('long')) {
        memberPage.set(s, Math.floor(Math.max(0, firstHit - 1) / MEMBERS_PER_PAGE) + 1);
      }
    }
  }

  function pageMembers(s) {
    const story = stories[s];
    // Row j holds member j + 1: the representative has none.
    const rows = story.querySelectorAll('tbody tr');
    const pages = Math.ceil(rows.length / MEMBERS_PER_PAGE);
    const page = Math.min(memberPage.get(s) || 1, pages);
    rows.forEach((row, j) => row.classList.toggle('on', Math.floor(j / MEMBERS_PER_PAGE) + 1 === page));
    let pager = story.querySelector('.storypager');
    if (!pager) {
      pager = document.createElement('div');
      pager.className = 'storypager';
      const prev = button('‹ members', () => { memberPage.set(s, (memberPage.get(s) || 1) - 1); pageMembers(s); });
      const info = document.createElement('span');
      const next = button('members ›', () => { memberPage.set(s, (memberPage.get(s) || 1) + 1); pageMembers(s); });
      pager.append(prev, info, next);
      story.append(pager);
    }
    const [prev, info, next] = pager.children;
    const first = (page - 1) * MEMBERS_PER_PAGE + 1;
    info.textContent = `members ${first + 1}–${Math.min(rows.length, page * MEMBERS_PER_PAGE) + 1} of ${rows.length + 1}`;
    prev.disabled = page <= 1;
    next.disabled = page >= pages;
    memberPage.set(s, page);
  }

  function button(label, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    b.addEventListener('click', onClick);
    return b;
  }

  // An id as text, with characters that would not show (controls, bidi and zero-width
  // marks) shown as their code points.
  function idNode(id) {
    const node = document.createElement('bdi');
    let plain = '';
    for (const c of id) {
      if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(c)) {
        node.append(plain);
        plain = '';
        const cp = document.createElement('span');
        cp.className = 'cp';
        cp.textContent = 'U+' + c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
        node.append(cp);
      } else {
        plain += c;
      }
    }
    node.append(plain);
    return node;
  }

  function element(tag, className, content) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (content !== undefined) e.append(content);
    return e;
  }

  // A text's kept words with its shared passages marked: `passages` are [start, end) pairs of
  // word positions, flattened. The words are the even parts of the text split at its
  // separators (a space, a line break, or a zero-width space between characters of a script
  // written without spaces); a separator is marked when the words on both sides are.
  function textNode(full, passages) {
    const box = element('div', 'text');
    const parts = full.split(/([ \n\u200B])/);
    const marked = new Uint8Array((parts.length + 1) / 2);
    for (let p = 0; p + 1 < passages.length; p += 2) {
      marked.fill(1, passages[p], Math.min(passages[p + 1], marked.length));
    }
    let run = '';
    let inMark = false;
    const flush = () => {
      if (run) box.append(inMark ? element('mark', '', run) : run);
      run = '';
    };
    parts.forEach((part, i) => {
      const inside = i % 2 === 0
        ? marked[i / 2] === 1
        : marked[(i - 1) / 2] === 1 && marked[(i + 1) / 2] === 1;
      if (inside !== inMark) {
        flush();
        inMark = inside;
      }
      run += part;
    });
    flush();
    return box;
  }

  const fixed = (x, digits) => (typeof x === 'number' ? x.toFixed(digits) : '–');

  function side(s, j, passages, heading) {
    const member = data.s[s][j];
    const box = element('section', 'side');
    const h = element('h3', '', heading + ' #' + (j + 1) + ' · ');
    h.append(idNode(member[0]));
    box.append(h);
    const full = text(s, j);
    if (full === '') {
      box.append(element('p', 'note', 'No text was read for this document.'));
      return box;
    }
    box.append(textNode(full, passages));
    if (member[4]) {
      box.append(element('p', 'note', '… the text goes on: the report keeps the start of each text (megashingle compare shows every shared passage).'));
    }
    return box;
  }

  function openView(s, j) {
    const members = data.s[s];
    if (!members || j < 1 || j >= members.length) { closeView(); return; }
    state.view = [s, j];
    const member = members[j];
    const pair = member[5];
    view.replaceChildren();
    const head = element('div', 'head');
    const title = element('h2', '', 'Side by side: ');
    title.append(idNode(member[0]), ' and its representative ', idNode(members[0][0]));
    head.append(title,
      button('‹ previous', () => openView(s, j - 1)),
      button('next ›', () => openView(s, j + 1)),
      button('close', closeView));
    head.children[1].disabled = j <= 1;
    head.children[2].disabled = j >= members.length - 1;
    view.append(head);
    const facts = element('div', 'facts');
    const fact = (value, label) => {
      const f = element('div');
      f.append(element('b', '', value), element('span', '', label));
      facts.append(f);
    };
    const row = leads[firstLead[s] + j].closest('tr');
    const joined = row ? row.cells[2] : null;
    if (pair) {
      const [common, ownShingles, repShingles, estimate, supers, megas, ownLead, repLead] = pair;
      fact(fixed(common / (ownShingles + repShingles - common), 4), 'exact Jaccard');
      fact(fixed(common / Math.min(ownShingles, repShingles), 4), 'containment (of the smaller)');
      fact(fixed(2 * common / (ownShingles + repShingles), 4), 'Dice');
      fact(common.toLocaleString('en'), `shingles in common (${ownShingles.toLocaleString('en')} and ${repShingles.toLocaleString('en')}, k = ${data.k})`);
      fact(fixed(estimate, 4), `Jaccard estimated from ${data.minima} minima`);
      fact(`${supers} of ${data.supershingles}`, 'supershingles shared');
      fact(`${megas} of ${data.megashingles}`, 'megashingles shared');
      fact(`${fixed(ownLead, 2)} · ${fixed(repLead, 2)}`, "share of each lead in the other: the member's · the representative's");
    } else {
      fact('–', 'cannot be compared: a text is too short or was not read');
    }
    if (joined) fact(joined.textContent, 'how it joined the story');
    view.append(facts);
    const sides = element('div', 'sides');
    sides.append(
      side(s, j, pair ? pair[8] : [], 'member'),
      side(s, 0, pair ? pair[9] : [], 'representative'));
    view.append(sides);
    view.hidden = false;
    writeHash();
    head.querySelector('button:last-child').focus({ preventScroll: true });
  }

  function closeView() {
    view.hidden = true;
    view.replaceChildren();
    state.view = null;
    writeHash();
  }

  const openRow = (row) => {
    const story = row.closest('details');
    openView(parseInt(story.id.slice(1), 10), row.sectionRowIndex + 1);
  };
  list.addEventListener('click', (event) => {
    const row = event.target.closest('tr.m');
    if (row) openRow(row);
  });
  list.addEventListener('keydown', (event) => {
    const row = event.target.closest('tr.m');
    if (row && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      openRow(row);
    }
  });
  document.addEventListener('keydown', (event) => {
    if (view.hidden || !state.view) return;
    const [s, j] = state.view;
    if (event.key === 'Escape') closeView();
    else if (event.key === 'ArrowRight' && j + 1 < data.s[s].length) openView(s, j + 1);
    else if (event.key === 'ArrowLeft' && j > 1) openView(s, j - 1);
  });
  let typing = 0;
  $('q').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.q = $('q').value; state.page = 1; apply(); }, 180);
  });
  $('size').addEventListener('change', () => { state.size = Math.max(1, parseInt($('size').value, 10) || 1); state.page = 1; apply(); });
  $('sim').addEventListener('change', () => {
    const sim = parseFloat($('sim').value);
    state.sim = Number.isFinite(sim) ? sim : null;
    state.page = 1;
    apply();
  });
  $('loose').addEventListener('change', () => { state.loose = $('loose').checked; state.page = 1; apply(); });
  $('prev').addEventListener('click', () => { state.page -= 1; apply(); window.scrollTo(0, list.offsetTop - 60); });
  $('next').addEventListener('click', () => { state.page += 1; apply(); window.scrollTo(0, list.offsetTop - 60); });
  window.addEventListener('hashchange', () => {
    readHash();
    apply();
    if (state.view) openView(state.view[0], state.view[1]); else if (!view.hidden) closeView();
  });

  readHash();
  controls.hidden = false;
  apply();
  if (state.view) openView(state.view[0], state.view[1]);
  document.documentElement.dataset.ready = String(Math.round(performance.now()));
}
