// agentgym view: the page over a run, its episodes and corrections. Plain JS, no build step.
// Served, it asks the server (api/…); exported, it reads the scripts of data/ and filters,
// pages and searches here, as the server does (agentcli/view/pages.py, index.py).
"use strict";

(() => {
  const EXPORTED = document.body.dataset.mode === "export";
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");

  // --- building the page ------------------------------------------------------------------

  // h("a", {href: "#"}, "text", child, [more]): an element; text is always text, never HTML.
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  function show(...children) {
    main.replaceChildren();
    append(main, children);
    window.scrollTo(0, 0);
  }

  function route(name, params) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== null && value !== undefined && value !== "") query.set(key, value);
    }
    return `#${name}?${query}`;
  }

  const percent = (x) => `${(100 * x).toFixed(1)}`;
  function number(x, digits = 3) {
    if (x === null || x === undefined) return "–";
    if (Math.abs(x) >= 10 ** digits || Number.isInteger(x)) return Math.round(x).toLocaleString("en");
    const text = Number(x).toPrecision(digits);
    return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  }
  const count = (x) => (x === null || x === undefined ? "–" : Number(x).toLocaleString("en"));
  const plural = (n, word) => `${count(n)} ${word}${n === 1 ? "" : "s"}`;

  // a path that may wrap after each "/", never inside a name
  function breakable(path) {
    return path.split("/").flatMap((part, i, parts) => (i < parts.length - 1 ? [`${part}/`, h("wbr")] : [part]));
  }

  function badge(success) {
    return success
      ? h("span", { class: "badge won" }, "succeeded")
      : h("span", { class: "badge lost" }, "failed");
  }

  // iteration k's matched control, as the report labels it (agentcli/run_layout.py: control_label)
  function controlLabel(k) {
    return k === 1 ? "control" : `control${k}`;
  }

  function isControl(label) {
    return /^control[0-9]*$/.test(label);
  }

  function iterationName(label) {
    // a model's label as report.json and the datasets hold it: "1", "control" (iteration 1's
    // control), "control2" (iteration 2's), "1:dpo"
    if (label === null || label === undefined) return "";
    if (isControl(label)) return label;
    const [k, variant] = label.split(":");
    return variant ? `iteration ${k} ${variant}` : `iteration ${k}`;
  }

  // --- the data: from the server, or from the exported scripts ----------------------------

  async function getJson(url) {
    const response = await fetch(url);
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  const fromServer = {
    overview: () => getJson("api/overview"),
    list: (d, params) => getJson(`api/list?${new URLSearchParams({ ...params, d })}`),
    episode: (d, row) => getJson(`api/episode?${new URLSearchParams({ d, row })}`),
    rawUrl: (d, row) => `api/raw?${new URLSearchParams({ d, row })}`,
    plotUrl: () => "api/plot",
  };

  // Exported data: scripts that call agentgymData(key, value) as they load.
  const loaded = new Map();
  const waiting = new Map();
  window.agentgymData = (key, value) => {
    loaded.set(key, value);
    for (const resolve of waiting.get(key) || []) resolve(value);
    waiting.delete(key);
  };

  function load(src, key) {
    if (loaded.has(key)) return Promise.resolve(loaded.get(key));
    return new Promise((resolve, reject) => {
      if (waiting.has(key)) return waiting.get(key).push(resolve);
      waiting.set(key, [resolve]);
      const script = h("script", { src });
      script.onerror = () => reject(new Error(`cannot read ${src} (is the export complete?)`));
      document.head.append(script);
    });
  }

  const SIZE = 50; // rows a list page shows, as the server's PAGE_SIZE

  // The list's filters, as the server applies them (agentcli/view/index.py: RecordIndex.matching).
  function passes(row, params) {
    if (params.success && params.success !== "any" && row.success !== (params.success === "true")) return false;
    if (params.end_reason && row.end_reason !== params.end_reason) return false;
    if (params.loop && params.loop !== "any" && !(params.loop === "stuck" ? row.loop === 1 : row.loop > 0)) return false;
    if (params.category && row.category !== params.category) return false;
    if (params.item && !row.item_id.includes(params.item)) return false;
    if (params.corrected && params.corrected !== "any" && ((row.changed || 0) > 0) !== (params.corrected === "true")) return false;
    return true;
  }

  const fromExport = {
    overview: () => load("data/overview.js", "overview"),
    async dataset(d) {
      const found = (await this.overview()).datasets.find((dataset) => dataset.id === d);
      if (!found) throw new Error(`this export has no dataset ${d}`);
      return found;
    },
    async chunk(dataset, number) {
      return load(`data/${dataset.folder}/chunk-${number}.js`, `chunk:${dataset.id}:${number}`);
    },
    async list(d, params) {
      const dataset = await this.dataset(d);
      const { rows, facets } = await load(`data/${dataset.folder}/rows.js`, `rows:${d}`);
      let hits = rows.filter((row) => passes(row, params));
      if (params.q) {
        const query = params.q.toLowerCase();
        const chunks = Math.ceil(rows.length / this.chunkSize());
        const found = new Set();
        for (let number = 0; number < chunks; number++) {
          (await this.chunk(dataset, number)).forEach((entry, i) => {
            if (entry.text.includes(query)) found.add(number * this.chunkSize() + i);
          });
        }
        hits = hits.filter((row) => found.has(row.row));
      }
      const pages = Math.max(1, Math.ceil(hits.length / SIZE));
      const page = Math.min(Math.max(Number(params.page) || 0, 0), pages - 1);
      return { dataset, total: hits.length, page, pages, size: SIZE, facets, rows: hits.slice(page * SIZE, (page + 1) * SIZE) };
    },
    async episode(d, row) {
      const dataset = await this.dataset(d);
      const size = this.chunkSize();
      const entry = (await this.chunk(dataset, Math.floor(row / size)))[row % size];
      if (!entry) throw new Error(`${d} has no record ${row}`);
      return entry.page;
    },
    chunkSize: () => loaded.get("overview").chunk,
    rawUrl: (d, row) => `raw/${loaded.get("overview").datasets.find((x) => x.id === d).folder}/${row}.json`,
    plotUrl: () => "data/plot.png",
  };

  const data = EXPORTED ? fromExport : fromServer;

  // --- the overview -----------------------------------------------------------------------

  function successCell(rate, se) {
    const bar = h("span", { class: "bar" }, h("span", { class: "fill", style: `width:${100 * rate}%` }));
    if (se !== undefined && se !== null && se > 0) {
      const left = Math.max(0, rate - se), right = Math.min(1, rate + se);
      bar.append(h("span", { class: "whisker", style: `left:${100 * left}%;width:${100 * (right - left)}%` }));
    }
    return h("td", { class: "success" }, bar, h("span", { class: "rate" }, `${percent(rate)}`, se ? ` ± ${percent(se)}` : "", " %"));
  }

  function reportSection(overview) {
    const report = overview.report;
    if (!report) return null;
    if (!report.rows.length) return h("section", {}, h("h2", {}, "Results"), h("p", { class: "muted" }, report.note));
    const paid = report.rows.some((row) => row.teacher_cost > 0); // the oracle costs nothing
    const columns = ["iteration", "env", "items", "success", "score", "steps", "looped (stuck)", "trained steps", paid ? "teacher $" : null];
    // rows as report.json holds them: a control is its iteration's, marked "control"; a
    // variant is its iteration's, named in "variant"
    const table = h("table", { class: "results" },
      h("thead", {}, h("tr", {}, columns.filter(Boolean).map((c) => h("th", {}, c)))),
      h("tbody", {}, report.rows.map((row) => h("tr", { class: row.control ? "control" : "" },
        h("td", {}, row.control ? controlLabel(row.iteration) : iterationName(row.variant ? `${row.iteration}:${row.variant}` : String(row.iteration))),
        h("td", {}, row.env, row.split ? h("span", { class: "muted small" }, ` · ${row.split}`) : null),
        h("td", { class: "num" }, count(row.items)),
        successCell(row.success_rate, row.success_se),
        h("td", { class: "num" }, number(row.mean_score), row.score_se ? h("span", { class: "muted" }, ` ± ${number(row.score_se, 2)}`) : null),
        h("td", { class: "num" }, number(row.mean_steps)),
        // episodes out of rounds in a loop, and those repeating an action that changed nothing
        h("td", { class: "num" }, count(row.looped), row.looped == null ? null : h("span", { class: "muted" }, ` (${count(row.stuck)})`)),
        h("td", { class: "num" }, count(row.train_steps)),
        paid ? h("td", { class: "num" }, Number(row.teacher_cost).toFixed(2)) : null,
      ))));
    const comparisons = report.comparisons.map((c) => h("li", {},
      `${c.env}: ${iterationName(c.model)} − ${isControl(c.baseline) ? "the " : ""}${iterationName(c.baseline)}: `,
      h("strong", { class: c.difference >= 0 ? "up" : "down" }, `${c.difference >= 0 ? "+" : "−"}${percent(Math.abs(c.difference))} ± ${percent(c.standard_error)}`),
      ` points, paired over ${count(c.items)} items`,
      c.wins === undefined ? null : h("span", { class: "muted" }, ` (won ${count(c.wins)}, lost ${count(c.losses)}, tied ${count(c.ties)})`)));
    return h("section", { class: "report" },
      h("h2", {}, "Results"),
      h("div", { class: "report-grid" },
        h("div", {}, table,
          comparisons.length ? h("ul", { class: "comparisons" }, comparisons) : null,
          h("p", { class: "note" }, "Success on held-out items with its standard error; differences are paired over the items both models played.")),
        overview.plot ? h("img", { class: "plot", src: data.plotUrl(), alt: "success per iteration (report.png)" }) : null));
  }

  function datasetLinks(dataset) {
    const links = [h("a", { href: route("list", { d: dataset.id }) }, "all")];
    if (dataset.kind === "episodes") {
      links.push(h("a", { href: route("list", { d: dataset.id, success: "false" }) }, "failed"));
      links.push(h("a", { href: route("list", { d: dataset.id, success: "true" }) }, "succeeded"));
    }
    if (dataset.kind === "corrections") links.push(h("a", { href: route("list", { d: dataset.id, corrected: "true" }) }, "changed"));
    return h("td", { class: "links" }, links);
  }

  function datasetFacts(dataset) {
    if (dataset.kind === "episodes") {
      const rate = dataset.count ? dataset.successes / dataset.count : 0;
      return [h("td", { class: "num" }, plural(dataset.count, "episode")),
        h("td", { class: "num" }, `${count(dataset.successes)} succeeded`, dataset.count ? h("span", { class: "muted" }, ` (${percent(rate)} %)`) : null)];
    }
    if (dataset.kind === "corrections") {
      return [h("td", { class: "num" }, plural(dataset.count, "correction")), h("td", { class: "num" }, `${count(dataset.corrected)} with changes`)];
    }
    return [h("td", { class: "num" }, plural(dataset.count, "record")), h("td", {})];
  }

  function datasetsSection(overview) {
    const body = [];
    let group;
    for (const dataset of overview.datasets) {
      const name = iterationName(dataset.iteration);
      if (name && name !== group) {
        group = name;
        body.push(h("tr", { class: "group" }, h("th", { colspan: 6 }, name)));
      }
      body.push(h("tr", { class: "dataset", "data-dataset": dataset.id },
        h("td", {}, h("a", { href: route("list", { d: dataset.id }) }, dataset.label)),
        h("td", {}, dataset.env || ""),
        ...datasetFacts(dataset),
        datasetLinks(dataset),
        h("td", { class: "path" }, breakable(dataset.id))));
    }
    return h("section", {}, h("h2", {}, "Episodes and corrections"),
      overview.datasets.length ? h("table", { class: "datasets" }, h("tbody", {}, body)) : h("p", { class: "muted" }, "No files of episodes or corrections yet."));
  }

  async function renderOverview() {
    const overview = await data.overview();
    if (overview.datasets.length === 1 && !overview.report) {
      return renderList({ d: overview.datasets[0].id });
    }
    setCrumbs([]);
    show(h("h1", {}, overview.title), h("p", { class: "sub" }, overview.path),
      reportSection(overview), datasetsSection(overview));
  }

  // --- the list ---------------------------------------------------------------------------

  function select(name, label, choices, value) {
    return h("label", {}, label,
      h("select", { name, id: `filter-${name}` }, choices.map(([v, text]) => h("option", { value: v, selected: v === (value || "") }, text))));
  }

  function filterForm(page, params) {
    const dataset = page.dataset;
    const fields = [];
    if (dataset.kind === "episodes") {
      fields.push(select("success", "Result", [["", "any"], ["true", "succeeded"], ["false", "failed"]], params.success));
      if (page.facets.end_reason.length) {
        fields.push(select("end_reason", "Ended", [["", "any"], ...page.facets.end_reason.map(([v, n]) => [v, `${v} (${count(n)})`])], params.end_reason));
      }
      if (page.facets.loop.length) {
        fields.push(select("loop", "Loop", [["", "any"], ...page.facets.loop.map(([v, n]) => [v, `${v} (${count(n)})`])], params.loop));
      }
    }
    if (page.facets.category.length) {
      fields.push(select("category", "Category", [["", "any"], ...page.facets.category.map(([v, n]) => [v, `${v} (${count(n)})`])], params.category));
    }
    if (dataset.kind === "corrections" || dataset.has_corrections) {
      fields.push(select("corrected", "Teacher", [["", "any"], ["true", "changed steps"], ["false", "changed none"]], params.corrected));
    }
    fields.push(h("label", {}, "Item id", h("input", { name: "item", id: "filter-item", value: params.item || "", placeholder: "contains…", size: 14 })));
    fields.push(h("label", { class: "grow" }, "Text", h("input", { name: "q", id: "filter-q", type: "search", value: params.q || "", placeholder: "in observations, reasons, actions…" })));
    const form = h("form", { class: "filters", id: "filters" }, fields,
      h("button", { type: "submit" }, "Apply"),
      h("a", { class: "clear", href: route("list", { d: dataset.id }) }, "clear"));
    const apply = (event) => {
      event.preventDefault();
      const chosen = { d: dataset.id };
      for (const element of form.elements) if (element.name && element.value) chosen[element.name] = element.value;
      location.hash = route("list", chosen);
    };
    form.addEventListener("submit", apply);
    for (const element of form.querySelectorAll("select")) element.addEventListener("change", apply);
    return form;
  }

  // An episode that ran out of rounds in a loop (agentcli/evaluate.py: loop_period): its last
  // action was taken that many steps before in the same state; 1 is an action that changed nothing.
  function loopName(period, action) {
    if (!period) return null;
    if (period > 1) return `loop of ${period}`;
    return action ? `stuck on ${action}` : "stuck";
  }

  function loopSentence(period) {
    if (!period) return null;
    return period === 1 ? "stuck repeating an action that changed nothing" : `in a loop of ${period} steps`;
  }

  function teacherCell(row) {
    if (row.changed === undefined) return null;
    if (row.changed === null) return h("td", { class: "muted" }, "not corrected");
    if (!row.changed) return h("td", { class: "agrees" }, "agrees throughout");
    return h("td", { class: "changes" }, `changes ${row.changed} of ${row.steps}`, h("span", { class: "muted" }, ` · first at step ${row.first_change}`));
  }

  function listTable(page) {
    const kind = page.dataset.kind;
    const withCategory = page.facets.category.length > 0;
    const withTeacher = kind === "episodes" && page.dataset.has_corrections;
    const head = ["#", "item"];
    if (kind === "episodes") head.push("result", "reward", "steps", "ended");
    if (kind === "corrections") head.push("steps", "teacher");
    if (withCategory) head.push("category");
    if (withTeacher) head.push("teacher");
    head.push("task");
    const rows = page.rows.map((row) => {
      const target = row.link || { dataset: page.dataset.id, row: row.row };
      const href = route("episode", { d: target.dataset, row: target.row });
      const cells = [h("td", { class: "num muted" }, row.row), h("td", { class: "item" }, h("a", { href }, row.item_id))];
      if (kind === "episodes") {
        cells.push(h("td", {}, badge(row.success)), h("td", { class: "num" }, number(row.reward)),
          h("td", { class: "num" }, row.steps), h("td", {}, [row.end_reason, loopName(row.loop, row.stuck_on)].filter(Boolean).join(" · ")));
      }
      if (kind === "corrections") cells.push(h("td", { class: "num" }, row.steps), teacherCell(row));
      if (withCategory) cells.push(h("td", {}, row.category || ""));
      if (withTeacher) cells.push(teacherCell(row));
      cells.push(h("td", { class: "task" }, row.task));
      return h("tr", { class: "episode-row", onclick: (event) => { if (event.target.tagName !== "A") location.hash = href; } }, cells);
    });
    return h("table", { class: "episodes" }, h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))), h("tbody", {}, rows));
  }

  function pager(page, params) {
    const to = (n) => route("list", { ...params, page: n || null });
    return h("nav", { class: "pager" },
      page.page > 0 ? h("a", { href: to(page.page - 1), rel: "prev" }, "‹ previous") : h("span", { class: "muted" }, "‹ previous"),
      h("span", {}, `page ${page.page + 1} of ${page.pages}`),
      page.page + 1 < page.pages ? h("a", { href: to(page.page + 1), rel: "next" }, "next ›") : h("span", { class: "muted" }, "next ›"));
  }

  function datasetSubtitle(dataset) {
    const facts = [dataset.env, iterationName(dataset.iteration), dataset.path].filter(Boolean);
    return h("p", { class: "sub" }, facts.join(" · "));
  }

  async function renderList(params) {
    main.classList.add("busy");
    const page = await data.list(params.d, params);
    const dataset = page.dataset;
    setCrumbs([[dataset.label, null]]);
    const noun = dataset.kind === "corrections" ? "corrections" : dataset.kind === "episodes" ? "episodes" : "records";
    const summary = dataset.kind === "episodes"
      ? `${count(page.total)} of ${plural(dataset.count, "episode")} (${count(dataset.successes)} succeeded in all)`
      : `${count(page.total)} of ${count(dataset.count)} ${noun}`;
    show(h("h1", {}, dataset.label), datasetSubtitle(dataset), metricsTable(dataset.metrics),
      filterForm(page, params),
      h("p", { class: "count", id: "count" }, summary),
      page.rows.length ? listTable(page) : h("p", { class: "empty" }, `No ${noun} pass these filters.`),
      page.pages > 1 ? pager(page, params) : null);
  }

  function metricsTable(metrics) {
    if (!Array.isArray(metrics) || !metrics.length) return null;
    const keys = Object.keys(metrics[0]);
    // a count per name (ends, action_kinds) as "name count, ..."
    const counts = (v) => Object.entries(v).map(([name, count]) => `${name} ${count}`).join(", ");
    const cell = (v) => h("td", { class: typeof v === "number" ? "num" : "" },
      typeof v === "number" && !Number.isInteger(v) ? number(v, 3) : v !== null && typeof v === "object" ? counts(v) : v);
    return h("details", { class: "metrics" }, h("summary", {}, "metrics.json"),
      h("table", {}, h("thead", {}, h("tr", {}, keys.map((k) => h("th", {}, k)))),
        h("tbody", {}, metrics.map((row) => h("tr", {}, keys.map((k) => cell(row[k])))))));
  }

  // --- one episode ------------------------------------------------------------------------

  function turn(who, reason, action, extra) {
    return h("div", { class: `turn ${who}` },
      h("div", { class: "who" }, who, extra || null),
      reason ? h("p", { class: "reason" }, reason) : h("p", { class: "reason muted" }, "(no reason given)"),
      h("p", { class: "action" }, h("span", { class: "label" }, "action"), action ? h("code", {}, action) : h("span", { class: "muted" }, "(no action)")));
  }

  function stepCard(step, firstChange) {
    const teacher = step.teacher;
    const classes = ["step"];
    let tag = null;
    if (teacher) {
      if (step.t === firstChange) { classes.push("first-disagreement"); tag = h("span", { class: "tag first" }, "first disagreement"); }
      else if (teacher.differs) { classes.push("differs"); tag = h("span", { class: "tag differs" }, "teacher differs"); }
      else { classes.push("agrees"); tag = h("span", { class: "tag agrees" }, "teacher agrees"); }
    }
    const outcome = [];
    if (step.reward) outcome.push(h("span", { class: "reward" }, `reward ${number(step.reward)}`));
    if (step.done) outcome.push(h("span", { class: "done" }, "done"));
    // what the agent saw on the left; what it did (and what the teacher would do) on the right
    return h("article", { class: classes.join(" "), id: `step-${step.t}`, "data-step": step.t },
      h("header", {}, h("span", { class: "t" }, `step ${step.t}`), tag,
        step.repeats !== null && step.repeats !== undefined ? h("span", { class: "tag repeats" }, "repeats ", jump(step.repeats)) : null, outcome),
      h("div", { class: "step-body" },
        h("div", {}, h("pre", { class: "observation" }, step.observation),
          step.candidate_actions ? h("details", { class: "candidates" }, h("summary", {}, `${step.candidate_actions.length} valid actions`), h("p", {}, step.candidate_actions.join(" · "))) : null),
        h("div", { class: teacher ? "turns two" : "turns" },
          turn("student", step.reason, step.action),
          teacher ? turn("teacher", teacher.reason, teacher.action) : null)));
  }

  function jump(t) {
    return h("a", { href: "javascript:void 0", onclick: () => document.getElementById(`step-${t}`).scrollIntoView({ behavior: "smooth" }) }, `step ${t}`);
  }

  function correctionBanner(page) {
    const correction = page.correction;
    if (!correction) return null;
    if (correction.mismatch) {
      return h("div", { class: "banner warn" }, h("strong", {}, "This item's correction is not of this episode: "), correction.mismatch,
        " (the item was rolled out again after it was corrected); the teacher's steps are not shown.");
    }
    const first = correction.first_change;
    return h("div", { class: "banner teacher", id: "correction" },
      h("p", {}, h("strong", {}, "The teacher "),
        correction.changed ? [`changed ${plural(correction.changed, "step")} of ${page.steps.length}; they first disagree at `, jump(first), "."] : "agrees with every step."),
      correction.summary ? h("p", { class: "muted" }, correction.summary) : null);
  }

  function elsewhereSection(page) {
    const others = page.elsewhere || [];
    if (!others.length) return null;
    const longest = Math.max(...others.map((o) => o.actions.length));
    const where = (o) => o.current ? h("strong", {}, o.label) : h("a", { href: route("episode", { d: o.dataset, row: o.row }) }, o.label);
    const head = h("tr", {}, h("th", {}, "step"), others.map((o) => h("th", { class: o.current ? "current" : "" },
      h("div", {}, where(o)), h("div", { class: "muted small" }, iterationName(o.iteration)),
      h("div", {}, badge(o.success), h("span", { class: "muted small" }, ` ${o.steps} steps · reward ${number(o.reward)}`)))));
    const rows = [];
    for (let t = 0; t < longest; t++) {
      const actions = others.map((o) => o.actions[t]);
      const same = actions.every((a) => a === actions[0]);
      rows.push(h("tr", { class: same ? "same" : "" }, h("td", { class: "num muted" }, t),
        others.map((o) => h("td", { class: o.current ? "current" : "" }, actionCell(o.actions[t])))));
    }
    // open unless the teacher's correction is the page's subject (a rollout's episode)
    const outcomes = others.filter((o) => !o.current).map((o) => h("span", { class: "outcome" }, `${o.label}: `, badge(o.success)));
    return h("details", { class: "elsewhere", open: !page.correction, id: "elsewhere" },
      h("summary", {}, "This item elsewhere in the run ", outcomes),
      h("div", { class: "scroll" }, h("table", { class: "side-by-side" }, h("thead", {}, head), h("tbody", {}, rows))));
  }

  function actionCell(action) {
    if (action === undefined) return null; // the episode had ended
    return action ? h("code", {}, action) : h("span", { class: "muted small" }, "(no action)");
  }

  function neighbours(page) {
    const to = (row) => route("episode", { d: page.dataset.id, row });
    return [page.row > 0 ? h("a", { href: to(page.row - 1) }, "‹ previous") : null,
      page.row + 1 < page.count ? h("a", { href: to(page.row + 1) }, "next ›") : null];
  }

  async function renderEpisode(params) {
    const page = await data.episode(params.d, Number(params.row));
    const dataset = page.dataset;
    setCrumbs([[dataset.label, route("list", { d: dataset.id })], [page.item_id, null]]);
    const links = h("p", { class: "links" },
      h("a", { href: data.rawUrl(page.raw.dataset, page.raw.row), target: "_blank", id: "raw" }, "raw JSON"),
      page.correction && page.correction.raw ? h("a", { href: data.rawUrl(page.correction.raw.dataset, page.correction.raw.row), target: "_blank" }, "the correction's raw JSON") : null,
      neighbours(page));
    const privileged = page.privileged ? h("details", { class: "privileged", open: true }, h("summary", {}, "Privileged state (what the teacher knows)"), h("pre", {}, page.privileged)) : null;
    if (page.kind === "privileged") {
      return show(h("h1", {}, page.item_id), datasetSubtitle(dataset), links, h("pre", { class: "observation" }, page.text));
    }
    if (page.kind === "corrections") {
      return show(h("h1", {}, page.item_id, " ", h("span", { class: "badge neutral" }, "correction")), datasetSubtitle(dataset), links,
        correctionBanner(page), privileged,
        h("section", { class: "steps" }, page.steps.map((step) => stepCard(step, page.correction.first_change))));
    }
    const episode = page.episode;
    const meta = episode.meta || {};
    const facts = [episode.env, page.category, episode.split && `${episode.split} split`, `reward ${number(episode.reward)}`,
      plural(episode.n_steps, "step"), meta.end_reason && `ended: ${[meta.end_reason, loopSentence(page.loop)].filter(Boolean).join(", ")}`, meta.policy && `policy ${meta.policy}`,
      meta.model && `model ${meta.model}`, `record ${page.row + 1} of ${count(page.count)}`].filter(Boolean);
    const firstChange = page.correction && !page.correction.mismatch ? page.correction.first_change : null;
    show(h("h1", {}, page.item_id, " ", badge(episode.success)),
      h("p", { class: "sub" }, `${dataset.label} · `, facts.join(" · ")),
      links,
      meta.error ? h("div", { class: "banner warn" }, h("strong", {}, "error: "), meta.error) : null,
      correctionBanner(page),
      elsewhereSection(page),
      privileged,
      h("details", { class: "instruction" }, h("summary", {}, "Instruction"), h("pre", {}, episode.instruction)),
      h("section", { class: "steps" }, page.steps.map((step) => stepCard(step, firstChange))),
      episode.final_observation ? h("section", { class: "final" }, h("h2", {}, "Final observation"), h("pre", { class: "observation" }, episode.final_observation)) : null);
  }

  // --- routing ----------------------------------------------------------------------------

  function setCrumbs(trail) {
    crumbs.replaceChildren();
    const parts = [h("a", { href: "#" }, "overview"), ...trail.map(([text, href]) => (href ? h("a", { href }, text) : h("span", {}, text)))];
    parts.forEach((part, i) => { if (i) crumbs.append(h("span", { class: "sep" }, "›")); crumbs.append(part); });
  }

  async function render() {
    const [name, query] = location.hash.replace(/^#/, "").split("?");
    const params = Object.fromEntries(new URLSearchParams(query || ""));
    try {
      if (name === "list" && params.d) await renderList(params);
      else if (name === "episode" && params.d) await renderEpisode(params);
      else await renderOverview();
    } catch (error) {
      show(h("div", { class: "banner warn", id: "error" }, h("strong", {}, "error: "), error.message));
    } finally {
      main.classList.remove("busy");
      document.body.dataset.ready = location.hash || "#"; // what the page shows now (tests wait for it)
    }
  }

  window.addEventListener("hashchange", render);
  data.overview().then((overview) => {
    document.getElementById("source").textContent = overview.path;
    document.title = `${overview.title} · agentgym view`;
  }).catch(() => {});
  render();
})();
