"use strict";
// deedbench view: fills the viewer's pages from its JSON API and keeps them current.
// Every string from the store goes into the page with textContent or through
// setAttribute on inert attributes, never parsed as HTML; the one exception is a run's
// figures, which are the HTML report's own markup, escaped by the server that made it
// (and the page's Content-Security-Policy lets no inline script run, whatever it held).
(function () {
  // The episode's transcript is built as the HTML report builds it (transcript.js).
  const { h, cssName, outcomeOf, chip, facts, episodeFacts, evidenceBox, callBox, scoreMarks, transcript, revealDetail, searchBoxes } = deedbenchTranscript;
  const MAIN = document.querySelector("main");
  const PAGE = MAIN.dataset.page;
  const SCORED = "(scored)";
  const ERROR = "(error)";
  const LIST_PAGE = 100;
  const enc = encodeURIComponent;

  async function api(path) {
    const response = await fetch(path, { headers: { accept: "application/json" } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || "HTTP " + response.status);
    return body;
  }

  function every(ms, work) {
    // Polls while the page is open; a failed poll (the server stopped) is tried again.
    const tick = async () => {
      try {
        await work();
      } catch (error) {
        showProblem(String(error.message || error));
      }
      setTimeout(tick, ms);
    };
    setTimeout(tick, ms);
  }

  function showProblem(text) {
    let node = document.getElementById("problem");
    if (!node) {
      node = h("p", { id: "problem", class: "problem" });
      MAIN.prepend(node);
    }
    node.textContent = text;
  }

  function clearProblem() {
    const node = document.getElementById("problem");
    if (node) node.remove();
  }

  function splitRef(ref) {
    const [run, condition, epoch, ...rest] = ref.split("/");
    return { run: run, condition: condition, epoch: epoch, sample: rest.join("/") };
  }

  function episodeUrl(ref) {
    const r = splitRef(ref);
    return "/runs/" + enc(r.run) + "/episodes/" + enc(r.condition) + "/" + enc(r.epoch) + "/" + enc(r.sample);
  }

  function episodeApi(ref) {
    return "/api" + episodeUrl(ref);
  }

  function pairUrl(a, b) {
    return "/pair?a=" + enc(a) + "&b=" + enc(b);
  }

  function stateText(state, executor) {
    if (state === "running") return "running" + (executor ? " (" + executor + ")" : "");
    if (state === "stopped") return "stopped before the end (resume it with deedbench run --run-id)";
    if (state === "imported") return "imported (its episodes are its file's: nothing to resume)";
    return "finished";
  }

  // --- one episode, as the HTML report's browser shows it ----------------------------

  function episodeHead(data) {
    const ep = data.episode;
    return h(
      "p",
      { class: "episode-head" },
      chip(outcomeOf(ep)),
      " " + data.run.agent + " · run " + data.run.id + " · " + ep.condition + " · epoch " + ep.epoch,
    );
  }

  // --- the runs list -----------------------------------------------------------------

  function runsPage() {
    const form = document.getElementById("runs-filters");
    const holder = document.getElementById("runs");
    const chosen = new Set();
    const controls = {};
    let latest = [];

    function select(name, label) {
      const node = h("select", { id: "runs-filter-" + name });
      node.append(h("option", { value: "", text: "all" }));
      node.addEventListener("change", () => draw());
      controls[name] = node;
      form.append(h("label", { class: "filter" }, h("span", { text: label }), node));
    }
    select("benchmark", "benchmark");
    select("agent", "agent");
    const button = h("button", { type: "button", id: "compare-chosen", text: "side by side", disabled: true });
    button.addEventListener("click", () => {
      const [a, b] = [...chosen];
      window.location.assign("/compare?a=" + enc(a) + "&b=" + enc(b));
    });
    form.append(button);

    function options(name, values) {
      const node = controls[name];
      const have = new Set([...node.options].map((o) => o.value));
      for (const value of [...new Set(values)].sort()) {
        if (!have.has(value)) node.append(h("option", { value: value, text: value }));
      }
    }

    function rateCell(run) {
      const cell = h("td", { class: "rate headline" });
      if (!run.figures) {
        cell.append(h("span", { class: "note", text: run.scored ? "computing…" : "—" }));
        return cell;
      }
      for (const r of run.figures.rates) {
        cell.append(
          h(
            "span",
            { class: "cond-rate", "data-condition": r.condition },
            h("span", { class: "cond", text: r.condition + " " }),
            h("strong", { text: r.rate }),
            h("span", { class: "ci", text: "W " + r.wilson + (r.boot ? " · B " + r.boot : "") }),
          ),
        );
      }
      return cell;
    }

    function progress(run) {
      const done = run.scored + run.errors;
      const share = run.planned ? Math.min(1, done / run.planned) : 1;
      return h(
        "td",
        { class: "progress", "data-scored": run.scored, "data-errors": run.errors, "data-planned": run.planned },
        h("span", { class: "bar" }, h("span", { class: "fill", style: "width:" + (100 * share).toFixed(1) + "%" })),
        h("span", { class: "counts" }, h("span", { text: run.scored + " scored" }), " · ", h("span", { text: run.errors + " errors" }), " · ", h("span", { text: run.planned + " planned" })),
      );
    }

    function breakable(text, longest) {
      // Breaks only after a "/" (a <wbr>), never inside a part of at most `longest`
      // characters; a longer part may break anywhere rather than widen the table.
      const node = h("span", { class: "breakable" });
      text.split(/(?<=\/)/).forEach((part, i) => {
        if (i) node.append(h("wbr"));
        node.append(h("span", { class: part.length <= longest ? "part" : "part long", text: part }));
      });
      return node;
    }

    function facts(run) {
      return run.conditions.join(", ") + " · " + run.epochs + "\u00a0epoch" + (run.epochs === 1 ? "" : "s");
    }

    function stateCell(run) {
      const cell = h("td", { class: "state" }, h("span", { class: "state-chip " + run.state, text: run.state }));
      if (run.state === "running" && run.executor) cell.append(h("span", { class: "sub", text: run.executor }));
      if (run.state === "stopped") cell.append(h("span", { class: "sub", text: "before the end: resume it with deedbench run --run-id" }));
      if (run.state === "imported") cell.append(h("span", { class: "sub", text: "from a file: nothing to resume" }));
      return cell;
    }

    function draw() {
      const want = { benchmark: controls.benchmark.value, agent: controls.agent.value };
      const rows = latest.filter(
        (r) => (!want.benchmark || r.benchmark === want.benchmark) && (!want.agent || r.agent === want.agent),
      );
      const body = h("tbody");
      for (const run of rows) {
        const box = h("input", { type: "checkbox", class: "choose", "aria-label": "choose " + run.id });
        box.checked = chosen.has(run.id);
        box.addEventListener("change", () => {
          if (box.checked) chosen.add(run.id);
          else chosen.delete(run.id);
          button.disabled = chosen.size !== 2;
        });
        const created = run.created.slice(0, 19).replace("T", " ");
        body.append(
          h(
            "tr",
            { class: "run-row state-" + run.state, "data-run": run.id, "data-version": run.version },
            h("td", {}, box),
            h(
              "th",
              { scope: "row", class: "run" },
              h("a", { class: "run-id", href: "/runs/" + enc(run.id), text: run.id, title: run.id }),
              h("span", { class: "sub created", text: created }),
              // where the columns below are hidden (narrow windows), the same facts here
              h("span", { class: "sub run-facts" }, run.benchmark + " · ", breakable(run.agent, 32), " · " + facts(run)),
            ),
            h("td", { class: "benchmark", text: run.benchmark }),
            h("td", { class: "agent" }, breakable(run.agent, 32)),
            h("td", { class: "conditions", text: facts(run) }),
            progress(run),
            rateCell(run),
            h("td", { class: "num cost", text: run.figures ? run.figures.cost || "none" : "" }),
            stateCell(run),
          ),
        );
      }
      const head = [["", ""], ["run", "run"], ["benchmark", "benchmark"], ["agent", "agent"], ["conditions", "conditions"], ["progress", "progress"], ["primary rate (95%)", "rate"], ["cost", "cost"], ["state", "state"]];
      const table = h("table", { class: "runs-list" }, h("thead", {}, h("tr", {}, ...head.map(([t, c]) => h("th", { class: c, text: t })))), body);
      const shown = h("p", { class: "count", id: "runs-count", text: rows.length + " of " + latest.length + " runs" });
      holder.replaceChildren(shown, rows.length ? table : h("p", { class: "note", text: latest.length ? "No run matches the filters." : "The store has no runs yet." }));
      button.disabled = chosen.size !== 2;
    }

    async function load() {
      const data = await api("/api/runs");
      clearProblem();
      latest = data.runs;
      for (const id of [...chosen]) if (!latest.some((r) => r.id === id)) chosen.delete(id);
      options("benchmark", latest.map((r) => r.benchmark));
      options("agent", latest.map((r) => r.agent));
      draw();
    }

    async function poll() {
      try {
        await load();
      } catch (error) {
        showProblem(String(error.message || error));
      }
      // While figures are being computed, look again soon: most take a moment.
      const computing = latest.some((r) => r.scored && !r.figures);
      setTimeout(poll, computing ? 300 : 2000);
    }
    poll();
  }

  // --- a run's page ------------------------------------------------------------------

  function runPage() {
    const RUN = MAIN.dataset.run;
    const base = "/runs/" + enc(RUN);
    const state = { where: {}, sort: "run", offset: 0, open: MAIN.dataset.open || "" };
    const controls = {};
    let version = "";
    let figuresAt = 0;
    let figuresVersion = "";
    let figuresBusy = false;  // one computation of the figures at a time
    let figuresOf = -1;
    let built = false;
    let lastActivity = null;

    function fromUrl() {
      const q = new URLSearchParams(window.location.search);
      const where = {};
      for (const name of ["condition", "outcome", "counted", "sample", "q", "fault"]) if (q.get(name)) where[name] = q.get(name);
      for (const item of q.getAll("group")) {
        const at = item.indexOf(":");
        if (at > 0) (where.group = where.group || {})[item.slice(0, at)] = item.slice(at + 1);
      }
      state.where = where;
      state.sort = q.get("sort") === "newest" ? "newest" : "run";
      const path = window.location.pathname;
      state.open = path.startsWith(base + "/episodes/") ? MAIN.dataset.open || refFromPath(path) : "";
    }

    function refFromPath(path) {
      const parts = path.slice((base + "/episodes/").length).split("/");
      const [condition, epoch, ...sample] = parts.map(decodeURIComponent);
      return [RUN, condition, epoch, sample.join("/")].join("/");
    }

    function query(where, extra) {
      const q = new URLSearchParams();
      for (const name of ["condition", "outcome", "counted", "sample", "q", "fault"]) if (where[name]) q.set(name, where[name]);
      for (const [key, value] of Object.entries(where.group || {})) q.append("group", key + ":" + value);
      for (const [name, value] of Object.entries(extra || {})) q.set(name, value);
      return q.toString();
    }

    function pageUrl() {
      const q = query(state.where, state.sort === "newest" ? { sort: "newest" } : {});
      return (state.open ? episodeUrl(state.open) : base) + (q ? "?" + q : "");
    }

    function remember(push) {
      const url = pageUrl();
      if (url !== window.location.pathname + window.location.search) {
        if (push) history.pushState(null, "", url);
        else history.replaceState(null, "", url);
      }
    }

    function select(name, label, options) {
      const node = h("select", { id: "filter-" + name, name: name, "data-filter-name": name });
      node.append(h("option", { value: "", text: "all" }));
      for (const [value, text] of options) node.append(h("option", { value: value, text: text }));
      node.addEventListener("change", () => fromControls());
      controls[name] = node;
      return h("label", { class: "filter" }, h("span", { text: label }), node);
    }

    function ensureOptions(name, values) {
      const node = controls[name];
      if (!node) return;
      const have = new Set([...node.options].map((o) => o.value));
      for (const [value, text] of values) if (!have.has(value)) node.append(h("option", { value: value, text: text }));
    }

    function buildFilters(data) {
      const form = document.getElementById("filters");
      form.append(select("condition", "condition", []));
      for (const key of data.group_by) form.append(select("group:" + key, key, []));
      form.append(select("outcome", "outcome", [[SCORED, "any scored outcome"], [ERROR, "errors (not scored)"]]));
      form.append(select("counted", "counted in rate", data.metrics));
      if (data.faults.length) form.append(select("fault", "whose failure, faults found", data.faults));
      const boxes = searchBoxes(form, 250, fromControls);
      controls.sample = boxes.sample;
      controls.q = boxes.words;
      const sort = h("select", { id: "filter-sort" }, h("option", { value: "run", text: "run order" }), h("option", { value: "newest", text: "newest first" }));
      sort.addEventListener("change", () => fromControls());
      controls.sort = sort;
      form.append(h("label", { class: "filter" }, h("span", { text: "order" }), sort));
      const reset = h("button", { type: "button", id: "filter-reset", text: "clear filters" });
      reset.addEventListener("click", () => applyFilter({}));
      form.append(reset);
      built = true;
    }

    function updateFacets(facets) {
      ensureOptions("condition", facets.conditions.map((c) => [c, c]));
      for (const [key, values] of Object.entries(facets.groups)) ensureOptions("group:" + key, values.map((v) => [v, v]));
      const outcomes = controls.outcome;
      const have = new Set([...outcomes.options].map((o) => o.value));
      for (const o of facets.outcomes) {
        if (!have.has(o)) outcomes.insertBefore(h("option", { value: o, text: o }), outcomes.lastChild);
      }
    }

    function toControls() {
      const w = state.where;
      for (const [name, node] of Object.entries(controls)) {
        if (name === "sort") continue;
        let value = "";
        if (name.startsWith("group:")) value = (w.group || {})[name.slice(6)] || "";
        else value = w[name] || "";
        if (value && node.tagName === "SELECT") ensureOptions(name, [[value, value]]);
        node.value = value;
      }
      controls.sort.value = state.sort;
    }

    function fromControls() {
      const where = {};
      for (const [name, node] of Object.entries(controls)) {
        if (name === "sort" || !node.value.trim()) continue;
        if (name.startsWith("group:")) (where.group = where.group || {})[name.slice(6)] = node.value;
        else where[name] = node.value.trim();
      }
      state.where = where;
      state.sort = controls.sort.value;
      state.offset = 0;
      remember(false);
      loadList().catch((error) => showProblem(error.message));
    }

    function applyFilter(where) {
      state.where = where;
      state.offset = 0;
      if (built) toControls();
      remember(true);
      loadList().catch((error) => showProblem(error.message));
    }

    async function loadList() {
      const data = await api("/api/runs/" + enc(RUN) + "/episodes?" + query(state.where, { sort: state.sort, offset: state.offset, limit: LIST_PAGE }));
      if (data.total && data.offset >= data.total) {
        state.offset = Math.floor((data.total - 1) / LIST_PAGE) * LIST_PAGE;  // the list shrank
        return loadList();
      }
      if (!built) {
        buildFilters(data);
        updateFacets(data.facets);
        toControls();
      } else {
        updateFacets(data.facets);
      }
      drawList(data);
    }

    function drawList(data) {
      const summary = document.getElementById("match-summary");
      summary.replaceChildren(
        h("strong", { id: "match-count", "data-count": data.total, text: data.total }),
        " episodes match",
        ...Object.entries(data.counts).map(([o, n]) => h("span", { class: "chip outcome-" + cssName(o), "data-outcome": o, text: o + " " + n })),
      );
      const body = h("tbody");
      for (const row of data.rows) body.append(listRow(row));
      const table = h("table", { class: "episodes" }, h("thead", {}, h("tr", {}, ...["episode", "outcome", "choice"].map((t) => h("th", { text: t })))), body);
      const list = document.getElementById("episode-list");
      const keep = list.scrollTop;
      list.replaceChildren(table);
      if (data.total > LIST_PAGE) {
        const last = Math.min(data.offset + data.rows.length, data.total);
        const pager = h("p", { class: "pager" });
        const previous = h("button", { type: "button", id: "prev-page", text: "previous " + LIST_PAGE, disabled: data.offset === 0 });
        const next = h("button", { type: "button", id: "next-page", text: "next " + LIST_PAGE, disabled: last >= data.total });
        previous.addEventListener("click", () => turn(-LIST_PAGE));
        next.addEventListener("click", () => turn(LIST_PAGE));
        pager.append(previous, " ", h("span", { id: "page-range", text: data.offset + 1 + "–" + last + " of " + data.total }), " ", next);
        list.append(pager);
      }
      list.scrollTop = keep;
    }

    function turn(step) {
      state.offset = Math.max(0, state.offset + step);
      loadList().catch((error) => showProblem(error.message));
    }

    function listRow(row) {
      const choice = row.choice === null ? "" : row.choice;
      const link = h("a", { href: episodeUrl(row.ref), class: "sample", text: row.sample });
      const tr = h(
        "tr",
        { class: "episode-row" + (row.ref === state.open ? " open" : ""), tabindex: 0, "data-ref": row.ref, "data-sample": row.sample },
        h("td", { class: "episode", title: row.sample }, link, h("span", { class: "sub", text: row.condition + " · epoch " + row.epoch })),
        h("td", {}, chip(row.shown)),
        h("td", { class: "choice", text: choice, title: choice }),
      );
      const open = (event) => {
        if (event) event.preventDefault();
        openEpisode(row.ref, true);
      };
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") open(event);
      });
      return tr;
    }

    async function openEpisode(ref, push) {
      state.open = ref;
      for (const tr of document.querySelectorAll(".episode-row")) tr.classList.toggle("open", tr.dataset.ref === ref);
      remember(push);
      const data = await api(episodeApi(ref));
      const ep = data.episode;
      const detail = document.getElementById("episode-detail");
      const parts = [h("h3", { text: ep.sample }), episodeHead(data), episodeFacts(ep)];
      if (data.related.length) {
        const links = h("p", { class: "related" }, h("span", { class: "label", text: "Side by side with: " }));
        data.related.forEach((r, i) => {
          if (i) links.append(" · ");
          links.append(h("a", { href: pairUrl(ref, r.ref), class: "pair-link", text: r.label }));
        });
        parts.push(links);
      }
      parts.push(evidenceBox(ep));
      parts.push(h("details", { class: "metadata" }, h("summary", { text: "sample metadata" }), facts(Object.entries(ep.metadata))));
      const words = (state.where.q || "").toLowerCase();
      const found = words ? [[words, "found", "matches the transcript search"]] : [];
      parts.push(h("h4", { text: ep.messages.length + " messages" }), transcript(ep, data.texts, () => found));
      detail.replaceChildren(...parts.filter((p) => p));
      detail.scrollTop = 0;
      const shown = document.querySelector('.episode-row[data-ref="' + CSS.escape(ref) + '"]');
      const list = document.getElementById("episode-list");
      if (shown && (shown.offsetTop < list.scrollTop || shown.offsetTop > list.scrollTop + list.clientHeight - 40)) {
        list.scrollTop = shown.offsetTop - 40;
      }
      revealDetail();
    }

    function linkFilters(root) {
      // The report's links say which episodes they stand for; here each is also a URL.
      for (const link of root.querySelectorAll("a[data-filter]")) {
        link.setAttribute("href", base + "?" + query(JSON.parse(link.dataset.filter)) + "#episodes");
      }
    }

    async function loadFigures() {
      figuresBusy = true;
      let data;
      try {
        data = await api("/api/runs/" + enc(RUN) + "/figures");
      } finally {
        figuresBusy = false;
      }
      figuresAt = Date.now();
      if (data.of_episodes === figuresOf && document.getElementById("summary")) return;
      figuresOf = data.of_episodes;
      const parsed = new DOMParser().parseFromString(data.html, "text/html");
      const holder = document.getElementById("figures");
      holder.replaceChildren(...[...parsed.body.childNodes].map((n) => document.importNode(n, true)));
      holder.dataset.ofEpisodes = data.of_episodes;
      linkFilters(holder);
      drawStatus();
    }

    function drawStatus() {
      const a = lastActivity;
      if (!a) return;
      const parts = [stateText(a.state, a.executor), a.scored + " scored, " + a.errors + " errors of " + a.planned + " planned"];
      if (figuresOf >= 0) parts.push("figures of " + figuresOf + " episode" + (figuresOf === 1 ? "" : "s"));
      const node = document.getElementById("run-status");
      node.textContent = parts.join(" · ");
      node.dataset.state = a.state;
      node.dataset.stored = a.scored + a.errors;
    }

    async function poll(figuresToo = true) {
      const a = await api("/api/runs/" + enc(RUN) + "/activity");
      clearProblem();
      lastActivity = a;
      drawStatus();
      if (a.version !== version) {
        version = a.version;
        await loadList();
      }
      // Figures are recomputed at most every 1.5 s while episodes arrive, and once more
      // after the last one, so they never stay behind the list.
      if (figuresToo && !figuresBusy && figuresVersion !== version && Date.now() - figuresAt > 1500) {
        const seen = version;
        await loadFigures();
        figuresVersion = seen;
      }
    }

    document.addEventListener("click", (event) => {
      const link = event.target.closest("[data-filter]");
      if (!link) return;
      event.preventDefault();
      applyFilter(JSON.parse(link.getAttribute("data-filter")));
      document.getElementById("episodes").scrollIntoView();
    });
    window.addEventListener("popstate", () => {
      fromUrl();
      if (built) toControls();
      loadList().catch((error) => showProblem(error.message));
      if (state.open) openEpisode(state.open, false).catch((error) => showProblem(error.message));
    });

    fromUrl();
    (async () => {
      await poll(false);  // the list and an episode first: the figures take longest
      if (state.open) await openEpisode(state.open, false);
      const seen = version;
      await loadFigures();
      figuresVersion = seen;
      // The figures above push the browser down: bring back what the URL named.
      if (state.open) revealDetail();
      else if (window.location.hash === "#episodes") document.getElementById("episodes").scrollIntoView();
    })().catch((error) => showProblem(error.message));
    every(1000, poll);
  }

  // --- two sides on shared samples ---------------------------------------------------

  function comparePage() {
    const a = MAIN.dataset.a;
    const b = MAIN.dataset.b;
    const state = { differ: new URLSearchParams(window.location.search).get("only") === "differ", limit: 200 };

    async function load() {
      const q = "a=" + enc(a) + "&b=" + enc(b) + "&limit=" + state.limit + (state.differ ? "&only=differ" : "");
      const data = await api("/api/compare?" + q);
      drawContrast(data);
      drawPairs(data);
    }

    function side(s) {
      return s.agent + " · " + s.run + " · " + s.condition;
    }

    function drawContrast(data) {
      const box = document.getElementById("contrast");
      const parts = [
        facts([["a", side(data.a)], ["b", side(data.b)], ["metric", data.metric]], "facts sides-facts"),
      ];
      if (data.note) parts.push(h("p", { class: "note", id: "pair-note", text: "Not paired: " + data.note }));
      if (data.headline) parts.push(h("p", { class: "headline", id: "contrast-line", text: data.headline }));
      if (data.contrast) {
        const d = data.contrast.difference;
        const m = data.contrast.mcnemar;
        parts.push(
          facts([
            ["paired episodes", String(data.pairs)],
            ["pairs that differ", String(data.differ)],
            ["b gained / lost", m.b01 + " / " + m.b10],
            ["clusters", String(d.clusters)],
            ["only in a", String(data.only_a)],
            ["only in b", String(data.only_b)],
          ]),
        );
        box.dataset.contrast = JSON.stringify(data.contrast);
      }
      box.replaceChildren(...parts);
    }

    function sideCell(s) {
      return h("td", { class: "side" }, h("a", { href: episodeUrl(s.ref) }, chip(s.outcome)), h("span", { class: "choice", text: s.choice === null ? "" : " " + s.choice }));
    }

    function drawPairs(data) {
      const holder = document.getElementById("pairs");
      const toggle = h("input", { type: "checkbox", id: "only-differ" });
      toggle.checked = state.differ;
      toggle.addEventListener("change", () => {
        state.differ = toggle.checked;
        const url = new URL(window.location.href);
        if (state.differ) url.searchParams.set("only", "differ");
        else url.searchParams.delete("only");
        history.replaceState(null, "", url);
        load().catch((error) => showProblem(error.message));
      });
      const bar = h("p", { class: "count" }, h("strong", { id: "pairs-count", "data-count": data.total, text: data.total }), " pairs shown ", h("label", {}, toggle, " only pairs that differ"));
      const body = h("tbody");
      for (const row of data.rows) {
        const diff = row.difference > 0 ? "+" + row.difference : String(row.difference);
        body.append(
          h(
            "tr",
            { class: "pair-row" + (row.difference ? " differs" : ""), "data-sample": row.sample, "data-epoch": row.epoch, "data-difference": row.difference },
            h("th", { scope: "row" }, h("a", { href: pairUrl(row.a.ref, row.b.ref), class: "pair-link", text: row.sample })),
            h("td", { class: "num", text: row.epoch }),
            sideCell(row.a),
            sideCell(row.b),
            h("td", { class: "num difference", text: diff }),
          ),
        );
      }
      const head = ["sample (both side by side)", "epoch", "a: " + side(data.a), "b: " + side(data.b), "b − a"];
      const table = h("div", { class: "table-wrap" }, h("table", { class: "pairs" }, h("thead", {}, h("tr", {}, ...head.map((t) => h("th", { text: t })))), body));
      holder.replaceChildren(bar, table);
      if (data.total > data.rows.length) {
        const more = h("button", { type: "button", id: "show-more", text: "show more" });
        more.addEventListener("click", () => {
          state.limit = Math.min(500, state.limit + 200);
          load().catch((error) => showProblem(error.message));
        });
        holder.append(more);
      }
    }

    load().catch((error) => showProblem(error.message));
  }

  // --- two episodes, tool calls aligned ----------------------------------------------

  function pairPage() {
    async function load() {
      const q = "a=" + enc(MAIN.dataset.a) + "&b=" + enc(MAIN.dataset.b);
      const data = await api("/api/pair?" + q);
      const holder = document.getElementById("pair");
      const heads = h("div", { class: "pair-grid" });
      for (const [name, side] of [["a", data.a], ["b", data.b]]) {
        const ep = side.episode;
        const ref = [side.run.id, ep.condition, ep.epoch, ep.sample].join("/");
        heads.append(
          h(
            "div",
            { class: "pair-side", id: "side-" + name },
            h("h3", {}, h("span", { class: "side-name", text: name + " " }), h("a", { href: episodeUrl(ref), text: ep.sample })),
            episodeHead(side),
            episodeFacts(ep),
          ),
        );
      }
      const results = [data.a, data.b].map((side) => {
        const map = new Map();
        for (const m of side.episode.messages) if (m.role === "tool") map.set(m.call_id, m);
        return map;
      });
      const body = h("tbody");
      for (const row of data.rows) {
        const cells = [["a", data.a, row.a, results[0]], ["b", data.b, row.b, results[1]]].map(([, side, at, map]) => {
          if (at === null) return h("td", { class: "gap", text: "—" });
          const call = side.episode.messages[at[0]].calls[at[1]];
          const { deciding } = scoreMarks(side.episode);
          const result = map.get(call.id);
          const cell = h("td", { class: "aligned" }, callBox(call, deciding));
          if (result) {
            const text = side.texts[result.content] || "";
            cell.append(h("details", { class: "result" }, h("summary", { text: "result" + (result.error ? " (error)" : "") + ": " + text.slice(0, 80) }), h("pre", { text: text })));
          }
          return cell;
        });
        const kind = row.a === null || row.b === null ? "gap-row" : row.same ? "same" : "differs";
        body.append(h("tr", { class: "call-row " + kind }, ...cells));
      }
      const table = h(
        "table",
        { class: "aligned-calls", id: "aligned" },
        h("thead", {}, h("tr", {}, h("th", { text: "a: " + data.a.run.agent + " · " + data.a.episode.condition }), h("th", { text: "b: " + data.b.run.agent + " · " + data.b.episode.condition }))),
        body,
      );
      const full = h("div", { class: "pair-grid transcripts" });
      for (const side of [data.a, data.b]) full.append(h("div", { class: "pair-side" }, transcript(side.episode, side.texts)));
      holder.replaceChildren(
        heads,
        h("h2", { text: "Tool calls, aligned" }),
        h("p", { class: "note", text: "Equal calls share a row; a call only one side made faces a gap; rows whose calls differ in their arguments are marked." }),
        h("div", { class: "table-wrap" }, table),
        h("h2", { text: "Both transcripts" }),
        full,
      );
    }
    load().catch((error) => showProblem(error.message));
  }

  if (PAGE === "runs") runsPage();
  else if (PAGE === "run") runPage();
  else if (PAGE === "compare") comparePage();
  else if (PAGE === "pair") pairPage();
})();
