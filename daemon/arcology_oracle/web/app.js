// arcology-oracle web page: ask, search, read headings, daemon status.
//
// Served by the daemon itself under a strict Content-Security-Policy (no inline script).
// Note text only ever enters the page through textContent / text nodes, never as HTML.
// When the daemon answers 401, the page asks for the token once, keeps it in
// localStorage and sends it as "Authorization: Bearer ..." on every call; never in a URL.
"use strict";

(() => {
  const TOKEN_KEY = "arcology-oracle.token";
  const STATUS_EVERY_MS = 15000; // idle
  const STATUS_BUSY_MS = 2000; // while indexing or embedding
  const STATUS_DOWN_MS = 3000; // while the daemon cannot be reached: back soon after it is
  const SEARCH_DELAY_MS = 250;
  // A look-up (status, search, a heading, similar notes) with no answer by then has failed:
  // a phone's connection to a computer that went to sleep hangs for minutes otherwise.
  const LOOKUP_TIMEOUT_MS = 20000;

  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------- DOM helpers

  /** An element with a class and text (text set with textContent, so never parsed). */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // ---------------------------------------------------------------- token storage

  let memoryToken = null; // used when localStorage is unavailable (private modes)

  function getToken() {
    try {
      return window.localStorage.getItem(TOKEN_KEY);
    } catch (_) {
      return memoryToken;
    }
  }

  function setToken(token) {
    memoryToken = token;
    try {
      if (token === null) window.localStorage.removeItem(TOKEN_KEY);
      else window.localStorage.setItem(TOKEN_KEY, token);
    } catch (_) {
      /* keep it in memory only */
    }
    $("forget-token").hidden = token === null;
  }

  let tokenPrompt = null; // one shared prompt for every request that got a 401

  function askForToken(message) {
    if (!tokenPrompt) {
      tokenPrompt = new Promise((resolve) => {
        const box = $("auth");
        const input = $("token-input");
        const before = document.activeElement; // where the keyboard goes back to afterwards
        $("auth-message").textContent = message;
        box.hidden = false;
        showDaemonState("token needed", "warn");
        input.value = "";
        input.focus();
        const form = $("auth-form");
        form.addEventListener(
          "submit",
          (event) => {
            event.preventDefault();
            setToken(input.value.trim());
            input.value = "";
            box.hidden = true;
            if (before && before !== document.body && before.isConnected) before.focus({ preventScroll: true });
            tokenPrompt = null;
            resolve();
            refreshStatus(); // the "token needed" chip, at once rather than at the next look
          },
          { once: true },
        );
      });
    }
    return tokenPrompt;
  }

  // ---------------------------------------------------------------- API

  /** The daemon's own refusal: ``status`` its HTTP status; ``retry`` (a 409's) whether the
   * same request can succeed if sent again in a moment (true), or never will (false). */
  class ApiError extends Error {
    constructor(message, status, retry) {
      super(message);
      this.status = status;
      this.retry = typeof retry === "boolean" ? retry : null;
    }
  }

  // What a browser can send in a header, and so all a token may be (the daemon's rule too).
  const SENDABLE_TOKEN = /^[\x21-\x7e]+$/;

  /** ``prompt`` (the token prompt), or an AbortError as soon as ``signal`` aborts. */
  function unlessAborted(prompt, signal) {
    if (!signal) return prompt;
    return new Promise((resolve, reject) => {
      const stop = () => reject(new DOMException("stopped", "AbortError"));
      if (signal.aborted) return stop();
      signal.addEventListener("abort", stop, { once: true });
      prompt.then(resolve, reject);
    });
  }

  /** fetch(), failing with a TimeoutError when no answer has begun within ``init.timeoutMs``. */
  async function fetchWithin(path, { timeoutMs, ...init }) {
    if (!timeoutMs) return fetch(path, init);
    const outer = init.signal;
    const within = new AbortController();
    const stop = () => within.abort(outer.reason);
    if (outer?.aborted) stop();
    else outer?.addEventListener("abort", stop, { once: true });
    const timer = setTimeout(
      () => within.abort(new DOMException(`no answer within ${timeoutMs / 1000} s`, "TimeoutError")),
      timeoutMs,
    );
    try {
      return await fetch(path, { ...init, signal: within.signal });
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", stop);
    }
  }

  /**
   * fetch() a daemon path with the stored token. On 401 the user is asked for the token
   * and the request is sent again; any other response is returned as it is. A request
   * stopped (``init.signal``) while the token is asked for gives up waiting for it.
   */
  async function api(path, init = {}) {
    for (;;) {
      const token = getToken();
      if (token && !SENDABLE_TOKEN.test(token)) {
        // headers.set would throw: no browser sends such a character in a header.
        setToken(null);
        await unlessAborted(
          askForToken("That token holds a character a browser cannot send (a space, or one that is not plain ASCII). Enter it again."),
          init.signal,
        );
        continue;
      }
      const headers = new Headers(init.headers || {});
      if (!headers.has("Accept")) headers.set("Accept", "application/json");
      if (token) headers.set("Authorization", `Bearer ${token}`);
      const response = await fetchWithin(path, { ...init, headers, credentials: "omit", cache: "no-store" });
      if (response.status !== 401) return response;
      if (token && getToken() === token) setToken(null);
      await unlessAborted(
        askForToken(
          token
            ? "The daemon did not accept that token. Enter it again."
            : "This daemon asks for its token. The page keeps it in this browser's local storage and sends it with every request.",
        ),
        init.signal,
      );
    }
  }

  /** The JSON body of a successful response; throws ApiError with the daemon's message otherwise. */
  async function jsonOf(response) {
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      /* not JSON */
    }
    if (!response.ok) {
      if (body && typeof body.error === "string") throw new ApiError(body.error, response.status, body.retry);
      // A proxy in front (tailscale serve) answers so when nothing answers behind it.
      if ([502, 503, 504].includes(response.status)) {
        throw new ApiError(`the daemon cannot be reached (the proxy in front of it answered HTTP ${response.status})`, response.status);
      }
      throw new ApiError(`HTTP ${response.status}`, response.status);
    }
    return body;
  }

  async function getJson(path, params, signal) {
    const query = params ? `?${new URLSearchParams(params)}` : "";
    return jsonOf(await api(path + query, { signal, timeoutMs: LOOKUP_TIMEOUT_MS }));
  }

  function describeError(error) {
    if (error instanceof ApiError) return error.message;
    // No network at all (a tunnel, flight mode): the daemon may be fine at home.
    if (navigator.onLine === false) return "this device is offline";
    if (error && error.name === "TimeoutError") {
      return `the daemon did not answer within ${LOOKUP_TIMEOUT_MS / 1000} s (is the computer it runs on asleep?)`;
    }
    return "the daemon cannot be reached";
  }

  /** What went wrong, for a call that failed; the chips above look again at once, so they
   * never say "embedder reachable" under an answer that says the daemon cannot be reached. */
  function failure(error) {
    setTimeout(refreshStatus, 0);
    return describeError(error);
  }

  // ---------------------------------------------------------------- status

  let statusTimer = null;

  function showDaemonState(text, kind) {
    const list = $("status");
    list.replaceChildren(el("li", `chip ${kind || ""}`, text));
  }

  function plural(n, word) {
    return `${n} ${word}${n === 1 ? "" : "s"}`;
  }

  function renderStatus(s) {
    const chips = [];
    const notes = typeof s.nodes === "number" ? s.nodes : s.files;
    chips.push(el("li", "chip", plural(notes, "note")));
    chips.push(el("li", "chip", plural(s.headings, "heading")));
    const pending = el("li", `chip ${s.pending > 0 ? "warn" : ""}`, `${s.pending} pending`);
    pending.title = "headings waiting for their embedding";
    chips.push(pending);
    const embedder = s.embedder || {};
    let text = "embedder: checking";
    let kind = "";
    if (embedder.reachable === true) {
      text = "embedder reachable";
      kind = "ok";
    } else if (embedder.reachable === false) {
      text = "embedder unreachable";
      kind = "bad";
    }
    const chip = el("li", `chip dot ${kind}`, text);
    chip.title = [embedder.model, embedder.error].filter(Boolean).join(": ");
    chips.push(chip);
    const indexing = s.indexing || {};
    if (indexing.running) {
      const progress = indexing.total ? ` ${indexing.done}/${indexing.total}` : "";
      chips.push(el("li", "chip warn", `${indexing.phase || "indexing"}${progress}`));
    }
    $("status").replaceChildren(...chips);
    return s.pending > 0 || indexing.running;
  }

  let statusInFlight = false;
  let daemonAway = false; // the last look at /status failed

  async function refreshStatus() {
    clearTimeout(statusTimer);
    if (statusInFlight) return; // the running refresh schedules the next one
    statusInFlight = true;
    let next = STATUS_EVERY_MS;
    try {
      if (renderStatus(await getJson("/status"))) next = STATUS_BUSY_MS;
      // Back after it could not be reached: a search that failed for want of it runs again
      // (only then: a search failing while the daemon answers would otherwise run forever).
      if (daemonAway && searchUnreached) runSearch(false);
      daemonAway = false;
    } catch (error) {
      showDaemonState(describeError(error), "bad");
      daemonAway = true;
      next = STATUS_DOWN_MS;
    } finally {
      statusInFlight = false;
    }
    clearTimeout(statusTimer);
    if (!document.hidden) statusTimer = setTimeout(refreshStatus, next);
  }

  // ---------------------------------------------------------------- hits (search results, sources)

  let hitCounter = 0;

  /** "Title", "Parent › Heading": the outline path under the node's title. */
  function outlinePath(hit) {
    const parts = [...(hit.olp || [])];
    if (parts[0] === hit.title) parts.shift(); // the node's own heading is the title already
    if (hit.heading && (hit.heading !== hit.title || parts.length)) parts.push(hit.heading);
    return parts.join(" › ");
  }

  /**
   * A list item for a search result or a source; tapping it shows the heading's text.
   * With ``prefetch`` the text (and the full outline path) is loaded at once.
   */
  const ROLE_TITLES = {
    oracle: "An answer the oracle wrote: not your own note",
    conversation: "A turn of a conversation with the oracle",
  };

  /** A small "oracle"/"conversation" badge for a result's role (null for the user's notes), as Emacs marks them. */
  function roleBadge(result) {
    if (!Object.hasOwn(ROLE_TITLES, result.role || "")) return null;
    const badge = el("span", `hit-role role-${result.role}`, result.role);
    badge.title = ROLE_TITLES[result.role];
    return badge;
  }

  // A snippet that only says the heading or the note's title again is left out, as
  // Emacs leaves it out.
  function repeatsTitle(hit) {
    const plain = (text) => (text || "").replace(/[\s.…]+$/u, "").toLowerCase();
    const snippet = plain(hit.snippet);
    return snippet === plain(hit.heading) || snippet === plain(hit.title);
  }

  function hitItem(hit, number, prefetch = false) {
    const id = `hit-${++hitCounter}`;
    const item = el("li", "hit");
    item.dataset.file = hit.file;
    item.dataset.line = String(hit.line);
    if (typeof hit.heading === "string") item.dataset.heading = hit.heading;
    if (number !== undefined) item.id = `source-${number}`;

    const button = el("button", "hit-head");
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-controls", id);
    if (number !== undefined) button.append(el("span", "hit-n", `[${number}]`));
    const label = el("span", "hit-label");
    const title = el("span", "hit-title", hit.title || hit.heading || hit.file);
    const badge = roleBadge(hit);
    if (badge) title.append(" ", badge);
    label.append(title);
    const pathText = outlinePath(hit);
    const path = el("span", "hit-path", pathText);
    path.hidden = !pathText;
    label.append(path);
    if (hit.snippet && !repeatsTitle(hit)) label.append(el("span", "hit-snippet", hit.snippet));
    // A window of dialogue: who speaks in it, and when.
    if (hit.speakers && hit.speakers.length) {
      label.append(el("span", "hit-speakers", [hit.speakers.join(", "), hit.date].filter(Boolean).join(" · ")));
    }
    button.append(label);

    const body = el("div", "hit-body");
    body.id = id;
    body.hidden = true;
    item.append(button, body);

    let loaded = false;
    const load = () => {
      loaded = true;
      loadHeading(hit, body, path).catch((error) => {
        loaded = false;
        if (error instanceof MovedError) {
          body.replaceChildren(el("p", "muted", error.message));
          if (number === undefined) reopenMoved(hit); // a search result: the search knows where it is now
          return;
        }
        body.replaceChildren(el("p", "error", `Could not load this heading: ${failure(error)}`));
      });
    };
    const setOpen = (open) => {
      button.setAttribute("aria-expanded", String(open));
      body.hidden = !open;
      if (open && !loaded) load();
    };
    openers.set(item, setOpen);
    button.addEventListener("click", (event) => {
      if (event.detail > 1) return; // the second tap of a double tap: it would shut what the first opened
      const open = button.getAttribute("aria-expanded") !== "true";
      setOpen(open);
      // Back shuts what a tap opened; a heading shut by a tap stays shut.
      recordView(open ? "push" : "replace");
    });
    if (prefetch) load();
    return item;
  }

  const openers = new WeakMap(); // a hit's <li> -> its function (open: boolean) => void

  function openHit(item) {
    const button = item.querySelector(".hit-head");
    if (button.getAttribute("aria-expanded") !== "true") button.click();
    button.focus({ preventScroll: true }); // Tab goes on into the source, not to the next marker
    item.scrollIntoView({ behavior: "smooth", block: "nearest" });
  }

  const LINK_RE = /\[\[([^\]]+)\](?:\[([^\]]*)\])?\]/g;

  /** Append org text to ``parent`` as text nodes; [[target][desc]] links show their description. */
  function appendOrgText(parent, text) {
    let last = 0;
    for (const match of text.matchAll(LINK_RE)) {
      if (match.index > last) parent.append(document.createTextNode(text.slice(last, match.index)));
      const link = el("span", "org-link", match[2] || match[1]);
      link.title = match[1];
      parent.append(link);
      last = match.index + match[0].length;
    }
    if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
  }

  // Lines that start a new visual line in Org: list items, keywords, drawers, rules, headings.
  const STRUCTURAL_RE = /^\s*(?:[-+]\s|\*+\s|\d+[.)]\s|#\+|:\w*:|-{5,}|$)/;

  /**
   * Org text as display blocks: tables and #+begin_ ... #+end_ blocks keep their lines
   * (monospace), the rest becomes paragraphs whose hard-wrapped lines are joined, so text
   * filled at 70 columns reads well on a narrow screen. Text goes in as text, never HTML.
   */
  function orgBlocks(text) {
    const blocks = [];
    let para = null;
    let fixed = null;
    let inBlock = false;
    const flush = () => {
      para = null;
      fixed = null;
    };
    // The file's #+title/#+filetags preamble repeats what the hit already shows.
    const lines = text.split("\n");
    while (lines.length && /^#\+(?!begin_)\w+:/i.test(lines[0].trim())) lines.shift();
    for (const line of lines) {
      const trimmed = line.trim();
      const table = !inBlock && trimmed.startsWith("|");
      if (inBlock || table || /^#\+begin_/i.test(trimmed)) {
        if (!fixed) {
          para = null;
          fixed = el("div", "org-fixed");
          blocks.push(fixed);
        }
        fixed.append(document.createTextNode(`${fixed.childNodes.length ? "\n" : ""}${line}`));
        if (/^#\+begin_/i.test(trimmed)) inBlock = true;
        else if (/^#\+end_/i.test(trimmed)) {
          inBlock = false;
          fixed = null;
        }
        continue;
      }
      fixed = null;
      if (!trimmed) {
        flush();
        continue;
      }
      if (para && !STRUCTURAL_RE.test(line)) {
        para.append(document.createTextNode(" "));
      } else {
        if (para) para.append(document.createTextNode("\n"));
        else {
          para = el("p", "org-para");
          blocks.push(para);
        }
      }
      appendOrgText(para, STRUCTURAL_RE.test(line) ? line.replace(/^\s+/, "") : trimmed);
    }
    return blocks;
  }

  /**
   * A heading's body as blocks (``orgBlocks``), the lines of a grounded model's reply it
   * holds (``replies``: file lines, the body ending at ``end_line``) in a box marked as the
   * oracle's words, as Emacs and MCP's read_note mark them: they are not the user's.
   */
  function bodyBlocks(h) {
    const body = h.body || "";
    const replies = h.replies || [];
    if (!replies.length || !Number.isInteger(h.end_line)) return orgBlocks(body);
    const lines = body.split("\n");
    const first = h.end_line - (lines.length - 1);
    const inReply = (k) => replies.some((r) => first + k >= r.line && first + k <= r.end_line);
    const blocks = [];
    for (let k = 0; k < lines.length; ) {
      const reply = inReply(k);
      let end = k;
      while (end < lines.length && inReply(end) === reply) end++;
      const part = orgBlocks(lines.slice(k, end).join("\n"));
      if (reply && part.length) {
        const box = el("div", "note-reply");
        box.append(roleBadge({ role: "oracle" }), ...part);
        blocks.push(box);
      } else blocks.push(...part);
      k = end;
    }
    return blocks;
  }

  /** The heading a result named is no longer at its line: the note was edited since. */
  class MovedError extends Error {}

  async function loadHeading(hit, body, path) {
    body.replaceChildren(el("p", "muted", "Loading…"));
    // A window of dialogue (a source with end_line) may start at a conversation's root,
    // whose own text is empty: its turns are the headings below, up to end_line.
    const params = { file: hit.file, line: hit.line };
    if (Number.isInteger(hit.end_line) && hit.end_line > hit.line) params.end_line = hit.end_line;
    const h = await getJson("/heading", params);
    // /heading gives the heading at that line now; another one's text would show under this label.
    if (typeof hit.heading === "string" && typeof h.heading === "string" && h.heading !== hit.heading) {
      throw new MovedError(`The note was edited since: “${hit.heading}” is no longer at ${hit.file}:${hit.line}.`);
    }
    const pathText = outlinePath(h);
    path.textContent = pathText;
    path.hidden = !pathText;
    const text = el("div", "note-text");
    text.append(...bodyBlocks(h));
    for (const turn of h.below || []) {
      const head = el("p", "note-turn", turn.heading);
      const badge = roleBadge(turn);
      if (badge) head.append(" ", badge);
      text.append(head, ...bodyBlocks(turn));
    }
    if (!text.textContent.trim()) text.replaceChildren(el("p", "muted", "(no text under this heading)"));
    const tags = (h.tags || []).length ? ` · :${h.tags.join(":")}:` : "";
    const meta = el("p", "note-meta", `${h.file}:${h.line}${tags}`);
    if (h.node_id) meta.title = `id:${h.node_id}`;
    body.replaceChildren(text, meta, similarBox(hit));
  }

  // ---------------------------------------------------------------- similar notes

  /** ``[[id:ID][Title]]``, brackets in the title made harmless (as /suggest-links does). */
  function orgLink(nodeId, title) {
    return `[[id:${nodeId}][${String(title).replace(/\[/g, "{").replace(/\]/g, "}")}]]`;
  }

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    // Plain http from a phone over Tailscale is not a secure context: no Clipboard API.
    const area = el("textarea", "offscreen");
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    if (!ok) throw new Error("the browser refused to copy");
  }

  /** A "Similar notes" button under a heading's text; each similar note can copy its org link. */
  function similarBox(hit) {
    const box = el("div", "similar");
    const toggle = el("button", "link similar-toggle", "Similar notes");
    toggle.type = "button";
    const list = el("ol", "similar-list");
    const state = el("p", "muted");
    state.setAttribute("role", "status");
    state.hidden = true;
    box.append(toggle, state, list);
    toggle.addEventListener("click", async () => {
      toggle.disabled = true;
      state.hidden = false;
      state.textContent = "Loading…";
      try {
        const found = await getJson("/similar", { file: hit.file, line: hit.line, k: 8 });
        list.replaceChildren(...found.results.filter((r) => r.node_id).map(similarItem));
        state.textContent = list.childElementCount ? "" : "No similar notes.";
        state.hidden = !!list.childElementCount;
      } catch (error) {
        state.textContent = `Could not load similar notes: ${failure(error)}`;
        toggle.disabled = false;
      }
    });
    return box;
  }

  function similarItem(result) {
    const item = el("li", "similar-item");
    item.dataset.node = result.node_id;
    const label = el("span", "similar-title", result.title);
    const badge = roleBadge(result);
    if (badge) label.append(" ", badge);
    const pathText = outlinePath(result);
    if (pathText && pathText !== result.title) label.title = pathText;
    const copy = el("button", "copy-link", "Copy link");
    copy.type = "button";
    const link = orgLink(result.node_id, result.title);
    copy.title = link;
    copy.addEventListener("click", async () => {
      try {
        await copyText(link);
        copy.textContent = "Copied";
      } catch (error) {
        copy.textContent = "Copy failed";
        copy.title = describeError(error);
      }
    });
    item.append(label, copy);
    return item;
  }

  // ---------------------------------------------------------------- search

  /** A search result whose heading moved (its note edited since the list was made): search
   * again and open the heading where it is now, or say that it is gone. */
  async function reopenMoved(hit) {
    const q = showing.q;
    if (!(await runSearch(false)) || showing.q !== q) return; // failed (it says so), or another search came
    const again = [...$("search-results").children].find(
      (item) => item.dataset.file === hit.file && item.dataset.heading === hit.heading,
    );
    // At the same line still: the daemon has not read the edited note yet (never a loop).
    if (again && again.dataset.line !== String(hit.line)) openHit(again);
    else {
      const why = again ? "is being read again: open it in a moment" : "is no longer there";
      $("search-state").textContent += ` (“${hit.heading}” in ${hit.file} ${why}.)`;
    }
  }

  let searchController = null;
  let searchTimer = null;
  let searchUnreached = false; // the search shown failed for want of the daemon (not its refusal)

  /** Search for what the box holds; true once its results (or none) are shown. ``record``
   * false: Back or Forward brought the query back, so no history entry is added (the
   * current one learns the new results). */
  async function runSearch(record = true) {
    clearTimeout(searchTimer);
    const q = $("search-input").value.trim();
    searchUnreached = false;
    if (searchController) searchController.abort();
    const state = $("search-state");
    const list = $("search-results");
    const shown = (items, text) => {
      list.replaceChildren(...items);
      state.textContent = text;
      const again = q === showing.q; // the same query once more (Enter): no new entry
      showing.q = q;
      showing.search = nextSerial();
      if (items.length) keep(kept.searches, showing.search, { q, items, text });
      recordView(record && !searchEntry && !again ? "push" : "replace");
      searchEntry = record; // typing on refines this entry; Back goes to before the search
    };
    if (!q) {
      shown([], "");
      return true;
    }
    const controller = new AbortController();
    searchController = controller;
    state.textContent = "Searching…";
    try {
      const data = await getJson("/search", { q, k: 12 }, controller.signal);
      if (controller.signal.aborted) return false;
      const results = data.results || [];
      const items = results.map((r, i) => {
        const item = hitItem(r);
        item.dataset.view = `r${i}`; // its name in a view's list of open headings
        return item;
      });
      shown(
        items,
        results.length
          ? `${plural(results.length, "heading")}${data.mode === "keyword" ? " (keyword match only)" : ""}`
          : "No matching headings.",
      );
      return true;
    } catch (error) {
      if (controller.signal.aborted) return false;
      searchUnreached = !(error instanceof ApiError);
      shown([], `Search failed: ${failure(error)}`); // the results below were another query's
      return false;
    }
  }

  // ---------------------------------------------------------------- ask

  let askController = null;
  let askingView = ""; // the answer view (its serial) the answer on its way writes into

  /** Whether the answer shown is still on its way (so the button stops it). */
  function shownAsking() {
    return Boolean(askController) && !$("answer-box").hidden && showing.ask === askingView;
  }

  /** The button says what it does for the view shown: Stop its answer on its way, else Ask.
   * An answer on its way for a view left behind goes on filling that view. */
  function showAsking() {
    const button = $("ask-button");
    const asking = shownAsking();
    button.textContent = asking ? "Stop" : "Ask";
    button.classList.toggle("stop", asking);
  }

  /** Replace the answer's [n] markers (and each number of a [1, 2]) by links to the matching sources. */
  function linkMarkers(answer, text, sourceNumbers) {
    const parts = [];
    let last = 0;
    const cite = (label, n) => {
      const link = el("a", "cite", label);
      link.href = `#source-${n}`;
      link.addEventListener("click", (event) => {
        event.preventDefault();
        const item = $(`source-${n}`);
        if (item) openHit(item);
      });
      return link;
    };
    for (const match of text.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g)) {
      const numbers = match[1].split(",").map((n) => Number(n.trim()));
      if (!numbers.some((n) => sourceNumbers.has(n))) continue;
      parts.push(document.createTextNode(text.slice(last, match.index)));
      if (numbers.length === 1) parts.push(cite(match[0], numbers[0]));
      else {
        // "[1, 2]": each number its own link, the brackets and commas text as written.
        let at = 0;
        const inner = match[1];
        const group = [document.createTextNode("[")];
        for (const piece of inner.matchAll(/\d{1,3}/g)) {
          group.push(document.createTextNode(inner.slice(at, piece.index)));
          const n = Number(piece[0]);
          group.push(sourceNumbers.has(n) ? cite(piece[0], n) : document.createTextNode(piece[0]));
          at = piece.index + piece[0].length;
        }
        group.push(document.createTextNode(`${inner.slice(at)}]`));
        parts.push(...group);
      }
      last = match.index + match[0].length;
    }
    parts.push(document.createTextNode(text.slice(last)));
    answer.replaceChildren(...parts);
  }

  /** Yield each parsed NDJSON object of a streamed response body as it arrives. */
  async function* ndjson(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line) yield JSON.parse(line);
      }
    }
    buffer += decoder.decode();
    if (buffer.trim()) yield JSON.parse(buffer);
  }

  async function ask(question) {
    if (askController) askController.abort();
    const controller = new AbortController();
    askController = controller;
    // Each question gets its own answer view (from the page's own empty one), kept so that
    // Back shows the answer before it again.
    const view = answerTemplate.map((node) => node.cloneNode(true));
    $("answer-box").replaceChildren(...view);
    const answer = $("answer");
    const state = $("ask-state");
    const sources = $("sources");
    const sourcesBox = $("sources-box");
    const sourceNumbers = new Set();
    const textNode = document.createTextNode("");
    $("answer-box").hidden = false;
    showing.ask = nextSerial();
    askingView = showing.ask;
    keep(kept.answers, showing.ask, { question, nodes: view });
    recordView("push");
    answer.replaceChildren(textNode);
    answer.dataset.state = "waiting";
    answer.setAttribute("aria-busy", "true");
    state.textContent = "Finding notes…";
    showAsking();

    const showSources = (list, usedNotes, mode) => {
      // Found without the question's embedding (Ollama busy or down), as a search says it.
      sourcesBox.querySelector("h3").textContent = mode === "keyword" ? "Sources (keyword match only)" : "Sources";
      sources.replaceChildren(
        ...(list || []).map((s, i) => {
          const n = s.n || i + 1;
          sourceNumbers.add(n);
          // Sources name their heading but may lack its outline path: fetch it (and the text).
          const item = hitItem(s, n, !Array.isArray(s.olp));
          item.dataset.view = `s${n}`;
          return item;
        }),
      );
      sourcesBox.hidden = !sources.children.length;
      state.textContent = usedNotes === false || !sources.children.length ? "No matching notes; answering without them." : "";
    };

    let finished = false;
    try {
      const response = await api("/ask", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/x-ndjson" },
        // progress: a "found" event once the notes are found, before the model's first words.
        body: JSON.stringify({ question, stream: true, progress: true }),
        signal: controller.signal,
      });
      const type = response.headers.get("Content-Type") || "";
      if (!response.ok || !type.includes("ndjson")) {
        const data = await jsonOf(response);
        showSources(data.sources, data.used_notes, data.mode);
        textNode.appendData(data.answer || "");
        finished = true;
      } else {
        answer.dataset.state = "streaming";
        for await (const event of ndjson(response.body)) {
          if (event.type === "found") {
            // The notes are found; the model may take long to load or to begin.
            const how = event.mode === "keyword" ? " by keywords" : "";
            state.textContent = event.used_notes === false || !event.count
              ? "No matching notes; waiting for the model…"
              : `Found ${plural(event.count, "note")}${how}; waiting for the model…`;
          } else if (event.type === "sources") {
            showSources(event.sources, event.used_notes, event.mode);
            if (!state.textContent) state.textContent = "Writing…";
          } else if (event.type === "token") {
            textNode.appendData(event.text || "");
          } else if (event.type === "done") {
            finished = true;
          } else if (event.type === "error") {
            throw new ApiError(event.message || "the model failed");
          }
        }
      }
      if (finished) {
        if (state.textContent === "Writing…") state.textContent = "";
        answer.dataset.state = "done";
        linkMarkers(answer, textNode.data, sourceNumbers);
      } else {
        throw new ApiError("the answer was cut off");
      }
    } catch (error) {
      if (controller.signal.aborted) {
        state.textContent = "Stopped.";
        answer.dataset.state = "stopped";
      } else {
        state.textContent = `Could not answer: ${failure(error)}`;
        answer.dataset.state = "error";
      }
    } finally {
      answer.removeAttribute("aria-busy");
      if (askController === controller) {
        askController = null;
        askingView = "";
        showAsking();
      }
    }
  }

  // ---------------------------------------------------------------- remember

  /** POST /memorize (JSON) and say where the note went (the inbox when Emacs holds today's daily). */
  async function remember() {
    const text = $("remember-text").value.trim();
    const tags = $("remember-tags").value.split(/[\s,:]+/).filter(Boolean);
    const state = $("remember-state");
    if (!text) {
      // Only spaces or newlines: the browser's "required" lets them through.
      state.textContent = "Nothing to remember: the box holds only spaces.";
      delete state.dataset.id;
      $("remember-text").focus();
      return;
    }
    $("remember-button").disabled = true;
    $("forget-capture").hidden = true; // it would name the note before this one
    state.textContent = "Saving…";
    try {
      const body = await jsonOf(
        await api("/memorize", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ text, tags }),
        }),
      );
      const where = `${body.file}:${body.line}`;
      // The note says why it went to the inbox, or that the index leaves it out or could not take it.
      if (body.note) state.textContent = `Saved to ${where}: ${body.note}`;
      else if (body.indexed === false) state.textContent = `Saved to ${where}, private: search will not find it.`;
      else state.textContent = `Saved to ${where}.`;
      state.dataset.id = body.id;
      lastCapture = { id: body.id, text };
      $("forget-capture").hidden = false;
      $("remember-text").value = "";
    } catch (error) {
      const why = failure(error);
      // The daemon's own refusal, or no network to send it on: surely not written. A dropped
      // connection may have lost only the answer, after the daemon wrote the note.
      const sure = error instanceof ApiError || navigator.onLine === false;
      state.textContent = sure
        ? `Not saved: ${why}`
        : `Perhaps not saved: ${why}. It may have been saved before the connection dropped: search for it before you send it again.`;
      delete state.dataset.id;
    } finally {
      $("remember-button").disabled = false;
    }
  }

  let lastCapture = null; // {id, text} of the last note remembered from this page

  /** POST /forget the last capture (only while it is as written: the daemon says so otherwise);
   * its text goes back into the box, to be fixed and remembered again. */
  async function forgetCapture() {
    const capture = lastCapture;
    const button = $("forget-capture");
    if (!capture || button.disabled) return;
    const state = $("remember-state");
    button.disabled = true; // a double tap forgets once
    state.textContent = "Taking it back…";
    try {
      const body = await jsonOf(
        await api("/forget", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ id: capture.id }),
        }),
      );
      if (lastCapture === capture) lastCapture = null;
      button.hidden = true;
      delete state.dataset.id;
      state.textContent = `Taken back: removed from ${body.file}.`;
      if (!$("remember-text").value.trim()) $("remember-text").value = capture.text;
    } catch (error) {
      const why = failure(error);
      // The daemon says whether trying again can work: the note open in another program or
      // being saved passes; a capture edited since (or the line above it) is the user's for good.
      if (error instanceof ApiError && (error.retry === false || error.status === 404)) {
        if (lastCapture === capture) lastCapture = null;
        button.hidden = true;
        delete state.dataset.id;
        state.textContent = `Cannot be taken back: ${why}. It stays in your notes as it is now.`;
      } else if (error instanceof ApiError && error.retry === true) {
        state.textContent = `Not taken back yet: ${why}. Tap “Take it back” again in a moment.`;
      } else {
        state.textContent = `Not taken back: ${why}`;
      }
    } finally {
      button.disabled = false;
    }
  }

  // ---------------------------------------------------------------- views: Back and Forward
  //
  // A view is what the page shows: the search (its query and results), the answer, which
  // headings are open, and how far the page is scrolled. Each view change the person makes
  // (a search, a question, a heading opened) adds a history entry, so the browser's Back
  // (or a swipe back) returns to the view before it; the page's first view adds none, so
  // Back from it leaves the page. Results and answers are kept in memory (never in history
  // or the URL), so Back shows them as they were. The URL carries only the search query
  // (#q=...: what the person typed), so a reload searches again; never note text or paths.

  const KEPT_VIEWS = 30; // result lists and answers kept for Back, each
  const LOAD_ID = Date.now().toString(36); // serials of an earlier load of the page are not ours
  let serial = 0;
  const nextSerial = () => `${LOAD_ID}.${++serial}`;
  const kept = { searches: new Map(), answers: new Map() };
  const showing = { q: "", search: "", ask: "" }; // what the page shows now
  let searchEntry = false; // the current entry is a search typed on since it was added
  let answerTemplate = []; // the answer box's empty view, as index.html has it

  function keep(map, key, value) {
    map.set(key, value);
    if (map.size > KEPT_VIEWS) map.delete(map.keys().next().value);
  }

  function hitItems() {
    return [...document.querySelectorAll("#search-results > li, #sources > li")];
  }

  function currentView() {
    const open = hitItems()
      .filter((item) => item.querySelector(".hit-head").getAttribute("aria-expanded") === "true")
      .map((item) => item.dataset.view);
    const ask = $("answer-box").hidden ? "" : showing.ask;
    return { arcology: 1, q: showing.q, search: showing.search, ask, open, y: Math.round(window.scrollY) };
  }

  function urlOf(view) {
    const base = location.pathname + location.search;
    return view.q ? `${base}#${new URLSearchParams({ q: view.q })}` : base;
  }

  /** Note the view in history: ``push`` a new entry (the one left has kept its scroll),
   * or ``replace`` the current one. */
  function recordView(how) {
    const view = currentView();
    if (how === "push") {
      searchEntry = false;
      keepScrollNow(); // of the entry left, even within the moment keepScroll waits
      history.pushState(view, "", urlOf(view));
    } else history.replaceState(view, "", urlOf(view));
  }

  // The scroll is kept in the current entry as it changes, so Back finds it there.
  let scrollTimer = null;
  function keepScrollNow() {
    clearTimeout(scrollTimer);
    if (history.state && history.state.arcology) {
      history.replaceState({ ...history.state, y: Math.round(window.scrollY) }, "");
    }
  }
  function keepScroll() {
    clearTimeout(scrollTimer);
    scrollTimer = setTimeout(keepScrollNow, 150);
  }

  function viewFromUrl() {
    const q = new URLSearchParams(location.hash.slice(1)).get("q") || "";
    return { arcology: 1, q, search: "", ask: "", open: [], y: 0 };
  }

  let viewTurn = 0; // the latest showView: one that waited on a search and was overtaken stops

  /** Show ``view`` (from history or the URL) without adding an entry. */
  async function showView(view) {
    const turn = ++viewTurn;
    clearTimeout(searchTimer);
    clearTimeout(scrollTimer);
    searchEntry = false;
    const answer = kept.answers.get(view.ask);
    if (answer) {
      $("answer-box").replaceChildren(...answer.nodes);
      showing.ask = view.ask;
    }
    $("question").value = answer ? answer.question : "";
    $("answer-box").hidden = !answer;
    showAsking();
    // Also when the view's results are shown: a search typed since, still on its way,
    // would take the page when it came.
    if (searchController) searchController.abort();
    $("search-input").value = view.q;
    if (view.q !== showing.q || view.search !== showing.search) {
      const found = kept.searches.get(view.search);
      if (found && found.q === view.q) {
        $("search-results").replaceChildren(...found.items);
        $("search-state").textContent = found.text;
        showing.q = view.q;
        showing.search = view.search;
      } else {
        await runSearch(false); // after a reload, or results not kept: search again
        if (turn !== viewTurn) return;
      }
    }
    const open = new Set(view.open || []);
    for (const item of hitItems()) {
      const want = open.has(item.dataset.view);
      if ((item.querySelector(".hit-head").getAttribute("aria-expanded") === "true") !== want) {
        openers.get(item)(want);
      }
    }
    window.scrollTo(0, view.y || 0);
    history.replaceState({ ...currentView(), y: view.y || 0 }, "");
  }

  /** After "Forget token" (a shared or borrowed device): no note text stays on the screen,
   * in the views kept for Back, or in the address; Back asks for the token again. */
  function dropShownNotes() {
    clearTimeout(searchTimer);
    if (searchController) searchController.abort();
    if (askController) askController.abort();
    kept.searches.clear();
    kept.answers.clear();
    $("answer-box").replaceChildren(...answerTemplate.map((node) => node.cloneNode(true)));
    $("answer-box").hidden = true;
    $("question").value = "";
    $("search-input").value = "";
    $("search-results").replaceChildren();
    $("search-state").textContent = "";
    $("remember-state").textContent = "";
    delete $("remember-state").dataset.id;
    $("forget-capture").hidden = true;
    lastCapture = null;
    Object.assign(showing, { q: "", search: "", ask: "" });
    searchUnreached = false;
    showAsking();
    history.replaceState({ ...currentView(), y: 0 }, "", urlOf({ q: "" }));
  }

  function startViews() {
    answerTemplate = [...$("answer-box").children].map((node) => node.cloneNode(true));
    history.scrollRestoration = "manual";
    window.addEventListener("popstate", (event) => {
      showView(event.state && event.state.arcology ? event.state : viewFromUrl());
    });
    window.addEventListener("scroll", keepScroll, { passive: true });
    // A reload keeps its entry's state (and the URL its query): show that view again.
    const first = history.state && history.state.arcology ? history.state : viewFromUrl();
    history.replaceState({ ...currentView(), y: 0 }, "", urlOf(first));
    if (first.q) showView(first);
  }

  // ---------------------------------------------------------------- wiring

  function init() {
    startViews();
    $("forget-token").hidden = !getToken();
    $("forget-token").addEventListener("click", () => {
      setToken(null);
      dropShownNotes();
      refreshStatus();
    });

    // How many clicks the last one on Ask/Stop was part of: the second click of a
    // double tap must not stop the question the first one asked.
    let askClicks = 0;
    $("ask-button").addEventListener("click", (event) => {
      askClicks = event.detail;
    });
    $("ask-form").addEventListener("submit", (event) => {
      event.preventDefault();
      if (shownAsking()) {
        // Only a single click (or tap) on Stop stops: not a second Ctrl+Enter, not a double tap.
        if (event.submitter === $("ask-button") && askClicks <= 1) askController.abort();
        return;
      }
      const question = $("question").value.trim();
      if (question) ask(question);
    });
    $("question").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        $("ask-form").requestSubmit();
      }
    });

    $("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      runSearch();
    });
    $("search-input").addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(runSearch, SEARCH_DELAY_MS);
    });

    $("remember-form").addEventListener("submit", (event) => {
      event.preventDefault();
      remember();
    });
    $("forget-capture").addEventListener("click", forgetCapture);

    window.addEventListener("online", () => refreshStatus());
    window.addEventListener("offline", () => refreshStatus());
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden) refreshStatus();
    });
    refreshStatus();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
