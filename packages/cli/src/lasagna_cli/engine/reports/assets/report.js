// lasagna's HTML report: draws the results embedded in #lasagna-data.
// Every string from the data is put in the page as text (textContent), never as HTML.
(function () {
  "use strict";
  var started = performance.now();
  var data = JSON.parse(document.getElementById("lasagna-data").textContent);
  var app = document.getElementById("app");

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined) return;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = value;
        else if (key.indexOf("data-") === 0 || key === "title" || key === "id" ||
                 key === "type" || key === "value" || key === "placeholder" || key === "tabindex")
          node.setAttribute(key, String(value));
        else node[key] = value;
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  function fmt(value, digits) {
    if (value === null || value === undefined) return "–";
    if (typeof value !== "number") return String(value);
    return value.toFixed(digits === undefined ? 3 : digits);
  }
  function metricName(metric) { return metric.split("/").slice(1).join("/"); }
  function summaryOf(result, metric) {
    var parts = metric.split("/");
    var track = result.metrics[parts[0]] || {};
    return track[parts.slice(1).join("/")] || null;
  }

  // -- overview ---------------------------------------------------------------------------
  function subtitle() {
    var runs = data.runs.map(function (r) { return r.label + " (" + r.kind + ")"; });
    var made = data.generator && data.generator["lasagna-cli"] ?
      "lasagna-cli " + data.generator["lasagna-cli"] : "lasagna";
    document.getElementById("subtitle").textContent =
      runs.join(", ") + " · " + data.groups.length + " benchmark group(s) · made by " + made;
  }

  function notes() {
    data.runs.forEach(function (run) {
      run.notes.forEach(function (note) {
        app.appendChild(el("p", {class: "note", text: run.label + ": " + note}));
      });
    });
  }

  function counts(result) {
    var c = result.counts || {};
    var judge = {};
    Object.keys(result.metrics).forEach(function (t) {
      if (result.metrics[t].judge_status) judge = result.metrics[t].judge_status;
    });
    return [
      ["scored", c.scored], ["failed", c.failed], ["missing", c.missing], ["not run", c.not_run],
      ["unparsed", judge.unparsed], ["grade errors", judge.error],
      ["no evidence", c.without_evidence],
    ];
  }

  function juryAlpha(result) {
    var found;
    Object.keys(result.metrics).forEach(function (t) {
      var jury = result.metrics[t].jury;
      if (jury && jury.agreement && jury.agreement.alpha !== null) found = jury.agreement.alpha;
    });
    return found;
  }

  function extraColumns(results) {
    function usage(r) { return r.usage || {}; }
    function latency(r) { return r.latency || {}; }
    var columns = counts(results[0]).map(function (c, i) {
      return {name: c[0], keep: c[0] === "scored" || c[0] === "failed",
        value: function (r) { return counts(r)[i][1]; },
        cell: function (r) {
          var v = counts(r)[i][1];
          return el("td", {class: v > 0 && c[0] !== "scored" ? "bad" : null, "data-count": c[0],
                           text: v === undefined ? "–" : String(v)});
        }};
    });
    columns.push({name: "jury alpha", keep: false,  // Krippendorff's alpha between the judges
      value: function (r) { return juryAlpha(r); },
      cell: function (r) { var v = juryAlpha(r); return el("td", {text: v === undefined ? "–" : fmt(v, 3)}); }});
    columns.push(
      {name: "tokens in", value: function (r) { return usage(r).input_tokens || undefined; },
       cell: function (r) { var u = usage(r); return el("td", {text: u.input_tokens ? String(u.input_tokens + (u.judge_input_tokens || 0)) : "–"}); }},
      {name: "tokens out", value: function (r) { return usage(r).output_tokens || undefined; },
       cell: function (r) { var u = usage(r); return el("td", {text: u.output_tokens ? String(u.output_tokens + (u.judge_output_tokens || 0)) : "–"}); }},
      {name: "answer s", value: function (r) { return latency(r).answer_s; },
       cell: function (r) { return el("td", {text: fmt(latency(r).answer_s, 3)}); }},
      {name: "retrieval ms", value: function (r) { return latency(r).retrieval_s; },
       cell: function (r) { var l = latency(r).retrieval_s; return el("td", {text: l === null || l === undefined ? "–" : fmt(l * 1000, 2)}); }},
      {name: "cost $", value: function (r) { return usage(r).cost_usd; },
       cell: function (r) {
         var u = usage(r);
         var cost = u.cost_usd !== undefined ? (u.cost_usd === null ? "unpriced: " + (u.unpriced || []).join(", ") : fmt(u.cost_usd, 4)) : "–";
         return el("td", {"data-cost": "1", text: cost});
       }});
    return columns.filter(function (c) {
      return c.keep || results.some(function (r) { var v = c.value(r); return v !== undefined && v !== null; });
    });
  }

  function leaderboard(group, gi) {
    var section = el("section", {class: "group", "data-group": gi});
    section.appendChild(el("h2", {text: group.dataset}));
    var keys = (group.comparability_keys || [group.key]).map(function (k) { return k.slice(0, 12); });
    var key = el("p", {class: "muted"},
      (keys.length === 1 ? "comparability key " + keys[0]
        : "comparability keys " + keys.join(", ") + " (they differ only in the setups' settings)") +
      (group.varied.length ? " · compared: " + group.varied.join(", ") : ""));
    section.appendChild(key);
    if ((group.held_fixed || {}).corpus_provenance === "pooled_gold") {
      section.appendChild(el("p", {class: "note pooled", text:
        "Retrieval searched pooled gold: only the passages these questions cite, not a real " +
        "corpus. That search is easier than one over your documents; give the corpus with " +
        "--corpus (or a BEIR folder with corpus.jsonl) for figures that hold in use."}));
    }
    settings(group, section);
    var tracks = [];
    group.metrics.forEach(function (m) {
      var t = m.split("/")[0];
      if (tracks.indexOf(t) < 0) tracks.push(t);
    });
    tracks.forEach(function (track) {
      if (track === "diagnostics") return;  // shown as the diagnosis table below
      var names = group.metrics.filter(function (m) { return m.split("/")[0] === track; });
      var table = el("table", {class: "leaderboard", "data-track": track});
      var head = el("tr", null, el("th", {class: "name", text: "setup"}));
      // A long name may break after an underscore (a zero-width space): narrow columns.
      names.forEach(function (m) {
        head.appendChild(el("th", {title: metricName(m), text: metricName(m).replace(/_/g, "_\u200b")}));
      });
      // The counts, usage and cost columns, each shown only when a setup has a value for
      // it ("scored" and "failed" always): empty columns made the table wider than a window.
      var extras = extraColumns(group.results);
      extras.forEach(function (c) { head.appendChild(el("th", {text: c.name})); });
      table.appendChild(el("caption", {class: "muted", text: track + " · mean and 95% bootstrap interval"}));
      table.appendChild(head);
      group.results.forEach(function (result) {
        var row = el("tr", {"data-setup": result.setup, "data-run": result.run});
        row.appendChild(el("td", {class: "name", text: result.label}));
        names.forEach(function (m) {
          var s = summaryOf(result, m);
          var td = el("td", {"data-metric": m});
          if (s && s.mean !== null && s.mean !== undefined) {
            td.setAttribute("data-value", String(s.mean));
            td.title = "95% interval [" + fmt(s.ci95_low) + ", " + fmt(s.ci95_high) + "], " +
              s.count + " values, " + s.missing + " missing";
            td.appendChild(document.createTextNode(fmt(s.mean)));
            td.appendChild(el("span", {class: "ci", text: "[" + fmt(s.ci95_low) + ", " + fmt(s.ci95_high) + "]"}));
          } else {
            td.textContent = "–";
          }
          row.appendChild(td);
        });
        extras.forEach(function (c) { row.appendChild(c.cell(result)); });
        table.appendChild(row);
      });
      section.appendChild(el("div", {class: "wide"}, table));
    });
    var charts = el("div", {class: "charts"});
    group.headline.forEach(function (metric) {
      var box = el("div", {class: "chart", "data-chart": metric});
      charts.appendChild(box);
      pendingCharts.push([box, group, metric]);
    });
    section.appendChild(charts);
    diagnosis(group, section);
    breakdowns(group, section);
    comparisons(group, section);
    return section;
  }

  var pendingCharts = [];
  function drawChart(box, group, metric) {
    var values = [];
    var top = 1;
    group.results.forEach(function (result) {
      var s = summaryOf(result, metric);
      if (s && s.mean !== null && s.mean !== undefined) {
        values.push({setup: result.label, mean: s.mean, low: s.ci95_low, high: s.ci95_high, n: s.count});
        top = Math.max(top, s.ci95_high || 0, s.mean);
      }
    });
    if (!values.length) return Promise.resolve();
    var x = {field: "mean", type: "quantitative", title: metricName(metric), scale: {domain: [0, top]}};
    var spec = {
      title: metricName(metric) + " (" + metric.split("/")[0] + ")",
      width: 300, height: {step: 24}, data: {values: values},
      encoding: {y: {field: "setup", type: "nominal", sort: null, title: null}},
      layer: [
        {mark: {type: "bar", color: "#8db6d3"}, encoding: {x: x, tooltip: [
          {field: "setup"}, {field: "mean", format: ".4f"}, {field: "low", format: ".4f"},
          {field: "high", format: ".4f"}, {field: "n"}]}},
        {mark: {type: "rule", color: "#1d2329"}, encoding: {x: {field: "low", type: "quantitative"}, x2: {field: "high"}}},
        {mark: {type: "text", align: "left", dx: 4}, encoding: {x: {field: "high", type: "quantitative"}, text: {field: "mean", format: ".3f"}}},
      ],
    };
    var view = new vega.View(vega.parse(vegaLite.compile(spec).spec), {renderer: "svg", container: box, hover: true});
    return view.runAsync();
  }

  // The claim diagnosis (RAGChecker's metrics), one column per setup: the retriever's
  // numbers apart from the generator's, so a low score says which part to fix.
  function diagnosis(group, section) {
    var results = group.results.filter(function (r) { return r.diagnosis; });
    if (!results.length) return;
    section.appendChild(el("h3", {text: "diagnosis: retriever vs generator"}));
    var table = el("table", {class: "diagnosis"});
    table.appendChild(el("caption", {class: "muted", text: "claim-level metrics (RAGChecker) · " +
      "mean and 95% bootstrap interval · ↓ lower is better"}));
    var head = el("tr", null, el("th", {class: "name", text: "part"}), el("th", {class: "name", text: "metric"}));
    results.forEach(function (r) { head.appendChild(el("th", {text: r.label})); });
    table.appendChild(head);
    results[0].diagnosis.rows.forEach(function (first) {
      var tr = el("tr", {"data-metric": "diagnostics/" + first.metric},
        el("td", {class: "name", text: first.group}),
        el("td", {class: "name", text: first.metric.replace(/_/g, " ") + (first.lower_is_better ? " ↓" : "")}));
      results.forEach(function (r) {
        var row = r.diagnosis.rows.filter(function (x) { return x.metric === first.metric; })[0];
        var td = el("td");
        if (row && row.mean !== null && row.mean !== undefined) {
          td.setAttribute("data-value", String(row.mean));
          td.title = row.count + " answers";
          td.appendChild(document.createTextNode(fmt(row.mean)));
          td.appendChild(el("span", {class: "ci", text: "[" + fmt(row.ci95_low) + ", " + fmt(row.ci95_high) + "]"}));
        } else {
          td.textContent = "–";
        }
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    var calls = el("tr", {class: "muted"}, el("td", {class: "name", text: "judge calls"}),
      el("td", {class: "name", text: "made · unparsed · failed"}));
    results.forEach(function (r) {
      var c = r.diagnosis.calls || {};
      calls.appendChild(el("td", {text: (c.made || 0) + " · " + (c.unparsed || 0) + " · " + (c.error || 0)}));
    });
    table.appendChild(calls);
    section.appendChild(el("div", {class: "wide"}, table));
  }

  function breakdowns(group, section) {
    group.breakdowns.forEach(function (b) {
      section.appendChild(el("h3", {text: "by " + b.by.replace("_", " ")}));
      var table = el("table", {class: "breakdown", "data-by": b.by});
      var head = el("tr", null, el("th", {class: "name", text: b.by}), el("th", {text: "questions"}));
      group.results.forEach(function (r) {
        group.headline.forEach(function (m) { head.appendChild(el("th", {text: r.label + " " + metricName(m)})); });
      });
      table.appendChild(head);
      b.rows.forEach(function (row) {
        var tr = el("tr", null, el("td", {class: "name", text: row.value}), el("td", {text: String(row.questions)}));
        row.cells.forEach(function (cell) {
          group.headline.forEach(function (m) {
            var v = cell[m] || [null, 0];
            tr.appendChild(el("td", {title: v[1] + " values", text: fmt(v[0]) + " (" + v[1] + ")"}));
          });
        });
        table.appendChild(tr);
      });
      section.appendChild(el("div", {class: "wide"}, table));
    });
  }

  // Each setup's settings: how its documents were cut (chunker, size, overlap), how it
  // searches, what answers; a column only when some setup of the group has a value.
  var SETTINGS = [
    ["retriever", function (s) { var r = s.retriever || {}; return r.method || r.type; }],
    ["top_k", function (s) { return (s.retriever || {}).top_k; }],
    ["chunker", function (s) { return (s.retriever || {}).chunker; }],
    ["chunk size", function (s) { return (s.retriever || {}).chunk_size; }],
    ["chunk overlap", function (s) { return (s.retriever || {}).chunk_overlap; }],
    ["generator", function (s) { return s.generator || s.model_id; }],
    ["prompt", function (s) { return s.prompt_sha256 ? s.prompt_sha256.slice(0, 12) : null; }]
  ];
  // The other settings the group's setups vary (results' names: stemmer, k1, embedder...).
  var SHOWN = ["retriever", "top_k", "chunker", "chunk_size", "chunk_overlap", "generator", "prompt"];
  function varied(name) {
    return [name, function (s) {
      var r = s.retriever || {};
      var v = Object.prototype.hasOwnProperty.call(r, name) ? r[name] : s[name];
      return v !== null && typeof v === "object" ? JSON.stringify(v) : v;
    }];
  }
  function settings(group, section) {
    function value(column, result) { return column[1](result.setup_info || {}); }
    var others = (group.varied || []).filter(function (n) { return SHOWN.indexOf(n) < 0; });
    var columns = SETTINGS.concat(others.map(varied)).filter(function (c) {
      return group.results.some(function (r) { var v = value(c, r); return v !== undefined && v !== null; });
    });
    if (!columns.length) return;
    var table = el("table", {class: "settings"});
    var head = el("tr", null, el("th", {class: "name", text: "setup"}));
    columns.forEach(function (c) { head.appendChild(el("th", {class: "name", text: c[0]})); });
    table.appendChild(el("caption", {class: "muted", text: "settings"}));
    table.appendChild(head);
    group.results.forEach(function (result) {
      var row = el("tr", {"data-setup": result.setup, "data-run": result.run});
      row.appendChild(el("td", {class: "name", text: result.label}));
      columns.forEach(function (c) {
        var v = value(c, result);
        row.appendChild(el("td", {class: "name", "data-setting": c[0],
                                  text: v === undefined || v === null ? "–" : String(v)}));
      });
      table.appendChild(row);
    });
    section.appendChild(el("div", {class: "wide"}, table));
  }

  function interval(m) {
    if (!m.n) return "–";
    if (m.ci95_low === null || m.ci95_high === null) return "unbounded";  // too few for a test
    return "[" + fmt(m.ci95_low) + ", " + fmt(m.ci95_high) + "]";
  }

  function comparisons(group, section) {
    if (!group.comparisons.length) return;
    section.appendChild(el("h3", {text: "paired comparisons (B − A, on the questions both scored)"}));
    var table = el("table", {class: "comparisons"});
    table.appendChild(el("tr", null, el("th", {class: "name", text: "A"}), el("th", {class: "name", text: "B"}),
      el("th", {class: "name", text: "metric"}), el("th", {text: "n"}), el("th", {text: "mean A"}),
      el("th", {text: "mean B"}), el("th", {text: "B − A"}),
      el("th", {title: "every difference the sign-flip test does not reject: without 0 exactly when p < 0.05", text: "95% interval"}),
      el("th", {text: "p"}),
      el("th", {title: "the smallest difference these questions detect (80% power, alpha 0.05); – when none can be (too few questions, or no spread)", text: "detectable"}),
      el("th", {title: "the questions the observed difference would need to be detected", text: "needs n"}),
      el("th", {class: "name", text: "left out"})));
    group.comparisons.forEach(function (c) {
      c.metrics.forEach(function (m) {
        var out = Object.keys(m.left_out).map(function (k) { return m.left_out[k] + " " + k; }).join(", ");
        table.appendChild(el("tr", {"data-metric": m.metric},
          el("td", {class: "name", text: c.a.setup}), el("td", {class: "name", text: c.b.setup}),
          el("td", {class: "name", text: m.metric}), el("td", {text: String(m.n)}),
          el("td", {text: fmt(m.mean_a)}), el("td", {text: fmt(m.mean_b)}),
          el("td", {"data-value": m.difference === undefined ? null : String(m.difference), text: fmt(m.difference)}),
          el("td", {text: interval(m)}),
          el("td", {text: m.p_value === undefined ? "–" : fmt(m.p_value, 4)}),
          el("td", {text: m.detectable === undefined ? "–" : fmt(m.detectable)}),
          el("td", {text: m.questions_needed == null ? "–" : m.questions_needed.toLocaleString("en")}),
          el("td", {class: "name", text: out || "none"})));
      });
    });
    section.appendChild(el("div", {class: "wide"}, table));
    // What each comparison shows, one sentence per metric (the engine's, as compare's).
    section.appendChild(el("h3", {text: "verdict"}));
    var verdicts = el("ul", {class: "verdicts"});
    group.comparisons.forEach(function (c) {
      c.metrics.forEach(function (m) {
        if (m.verdict) verdicts.appendChild(el("li", {"data-metric": m.metric, text: m.verdict}));
      });
    });
    section.appendChild(verdicts);
  }

  // -- questions ---------------------------------------------------------------------------
  var ROW = 28;
  var state = {group: 0, search: "", filter: "all", sort: "id", metric: null, order: []};

  function metricValue(cell, metric) {
    if (!cell || cell.s !== "scored" || !cell.v) return null;
    var index = metric === state.metric ? state.metricIndex : data.groups[state.group].metrics.indexOf(metric);
    var v = cell.v[index];
    return v === undefined ? null : v;
  }
  function disagreement(row, metric) {
    var values = row.c.map(function (cell) { return metricValue(cell, metric); })
      .filter(function (v) { return v !== null; });
    if (values.length < 2) return 0;
    return Math.max.apply(null, values) - Math.min.apply(null, values);
  }
  function failures(row) {
    return row.c.filter(function (cell) { return !cell || cell.s !== "scored"; }).length;
  }
  function unparsed(row) {
    return row.c.some(function (cell) {
      if (!cell || !cell.a) return false;
      return Object.keys(cell.a).some(function (t) {
        var s = cell.a[t].judge_status; return s === "unparsed" || s === "error";
      });
    });
  }
  function haystack(row) {
    if (row._text === undefined) {
      var parts = [row.id, row.q || "", (row.refs || []).join(" ")];
      row.c.forEach(function (cell) {
        if (cell && cell.a) Object.keys(cell.a).forEach(function (t) { parts.push(cell.a[t].prediction || ""); });
        if (cell && cell.e) parts.push(cell.e);
      });
      row._text = parts.join("\n").toLowerCase();
    }
    return row._text;
  }

  function visibleRows() {
    var group = data.groups[state.group];
    var metric = state.metric;
    var needle = state.search.trim().toLowerCase();
    var rows = group.questions.filter(function (row) {
      if (needle && haystack(row).indexOf(needle) < 0) return false;
      if (state.filter === "failed") return failures(row) > 0;
      if (state.filter === "disagree") return disagreement(row, metric) > 0;
      if (state.filter === "unparsed") return unparsed(row);
      return true;
    });
    var by = state.sort;
    var key;
    if (by === "disagreement") key = function (r) { return -disagreement(r, metric); };
    else if (by === "failures") key = function (r) { return -failures(r); };
    else if (by.indexOf("setup:") === 0) {
      var index = Number(by.split(":")[1]);
      var descending = by.split(":")[2] === "desc";
      key = function (r) {
        var v = metricValue(r.c[index], metric);
        if (v === null) return Infinity;
        return descending ? -v : v;
      };
    }
    if (key) {
      var keyed = rows.map(function (r, i) { return [key(r), i, r]; });
      keyed.sort(function (a, b) { return a[0] === b[0] ? a[1] - b[1] : (a[0] < b[0] ? -1 : 1); });
      rows = keyed.map(function (k) { return k[2]; });
    }
    return rows;
  }

  var list, listHead, layer, spacer, shown, detail, countLine, sortSelect, metricSelect;
  function renderRows() {
    var group = data.groups[state.group];
    var top = list.scrollTop;
    var first = Math.max(0, Math.floor(top / ROW) - 5);
    var last = Math.min(shown.length, first + Math.ceil(list.clientHeight / ROW) + 10);
    layer.style.top = (first * ROW) + "px";
    layer.textContent = "";
    for (var i = first; i < last; i++) {
      var row = shown[i];
      var line = el("div", {class: "qrow", "data-qid": row.id, tabindex: 0},
        el("span", {class: "qid", title: row.id, text: row.id}),
        el("span", {class: "qtext", text: row.q || ""}));
      row.c.forEach(function (cell, ci) {
        var text, cls = "cell";
        if (!cell) { text = "–"; }
        else if (cell.s !== "scored") { text = cell.s; cls += " status-" + cell.s.replace(" ", "."); }
        else { text = fmt(metricValue(cell, state.metric)); }
        line.appendChild(el("span", {class: cls, title: group.results[ci].label, text: text}));
      });
      line.addEventListener("click", showDetail.bind(null, row));
      line.addEventListener("keydown", function (r, ev) { if (ev.key === "Enter") showDetail(r); }.bind(null, row));
      layer.appendChild(line);
    }
  }
  function header() {
    var group = data.groups[state.group];
    listHead.textContent = "";
    listHead.appendChild(el("span", {class: "qid", text: "id"}));
    listHead.appendChild(el("span", {class: "qtext", text: "question"}));
    group.results.forEach(function (r) {
      listHead.appendChild(el("span", {class: "cell", title: r.label, text: r.label}));
    });
  }
  function refresh() {
    state.metricIndex = data.groups[state.group].metrics.indexOf(state.metric);
    header();
    shown = visibleRows();
    spacer.style.height = (shown.length * ROW) + "px";
    countLine.textContent = "showing " + shown.length + " of " + data.groups[state.group].questions.length + " questions";
    list.scrollTop = 0;
    renderRows();
  }

  function highlight(text, evidence) {
    var frag = document.createDocumentFragment();
    var marks = [];
    (evidence || []).forEach(function (ev) {
      if (!ev) return;
      var at = text.indexOf(ev);
      while (at >= 0) { marks.push([at, at + ev.length]); at = text.indexOf(ev, at + ev.length); }
    });
    marks.sort(function (a, b) { return a[0] - b[0]; });
    var pos = 0;
    marks.forEach(function (m) {
      if (m[0] < pos) return;
      frag.appendChild(document.createTextNode(text.slice(pos, m[0])));
      frag.appendChild(el("mark", {text: text.slice(m[0], m[1])}));
      pos = m[1];
    });
    frag.appendChild(document.createTextNode(text.slice(pos)));
    return frag;
  }

  function showDetail(row) {
    var group = data.groups[state.group];
    var passages = data.passages[group.dataset] || {};
    detail.textContent = "";
    detail.setAttribute("data-qid", row.id);
    detail.appendChild(el("h3", {text: "question " + row.id}));
    detail.appendChild(el("p", {class: "question", text: row.q || "(the question's text is not in the report: see the notes above)"}));
    if (row.refs) detail.appendChild(el("p", null, el("b", {text: "references: "}), row.refs.join(" | ")));
    if (row.un) detail.appendChild(el("p", {class: "muted", text: "unanswerable: a refusal is the right answer"}));
    var facts = [];
    if (row.cat) facts.push("category " + row.cat);
    if (row.qt) facts.push("type " + row.qt);
    if (row.ev) facts.push("evidence " + row.ev.join(", "));
    if (facts.length) detail.appendChild(el("p", {class: "muted", text: facts.join(" · ")}));
    row.c.forEach(function (cell, ci) {
      var result = group.results[ci];
      var box = el("div", {class: "setup", "data-setup": result.setup});
      box.appendChild(el("h3", {text: result.label + ": " + (cell ? cell.s : "no result")}));
      if (!cell) { detail.appendChild(box); return; }
      if (cell.e) box.appendChild(el("div", {class: "error", text: cell.e}));
      if (cell.v) {
        var parts = [];
        group.metrics.forEach(function (m, mi) {
          if (cell.v[mi] !== null && cell.v[mi] !== undefined) parts.push(metricName(m) + " " + fmt(cell.v[mi]));
        });
        box.appendChild(el("p", {class: "scores", text: parts.join(" · ")}));
      }
      if (cell.a) Object.keys(cell.a).forEach(function (track) {
        var a = cell.a[track];
        box.appendChild(el("p", null, el("b", {text: track + " answer"}),
          a.model ? " (" + a.model + ")" : ""));
        box.appendChild(el("div", {class: "answer", text: a.prediction === undefined ? "" : String(a.prediction)}));
        var line = ["EM " + fmt(a.exact_match), "F1 " + fmt(a.f1)];
        if (a.refused) line.push("refused");
        if (a.input_tokens !== undefined) line.push("tokens " + a.input_tokens + " in, " + (a.output_tokens || 0) + " out");
        if (a.latency_s !== undefined) line.push(fmt(a.latency_s, 3) + " s");
        if (a.cost_usd !== undefined) line.push(a.cost_usd === null ? "cost unpriced" : "$" + fmt(a.cost_usd, 5));
        box.appendChild(el("p", {class: "muted", text: line.join(" · ")}));
        var j = a.judge;
        if (j || a.judge_status) {
          j = j || {score: a.judge_score, status: a.judge_status};
          box.appendChild(el("p", {class: "judge"}, el("b", {text: "judge: "}),
            "score " + fmt(j.score, a.jury ? 2 : 0) + " · " + (j.status || "") + (j.path ? " · path " + j.path : "") +
            (j.model ? " · " + j.model : "")));
          if (a.jury) box.appendChild(el("p", {class: "muted", text: "jury (the mean of the parsed grades): " +
            a.jury.map(function (g) { return g.model + " " + (g.status === "ok" ? fmt(g.score, 0) : g.status); }).join(" · ")}));
          if (j.reasoning) box.appendChild(el("div", {class: "reasoning", text: j.reasoning}));
          if (j.error) box.appendChild(el("div", {class: "error", text: j.error}));
        }
      });
      if (cell.r) {
        var ol = el("ol", {class: "ranking"});
        var grades = cell.j || {};
        cell.r.forEach(function (doc, i) {
          var grade = Object.prototype.hasOwnProperty.call(grades, doc) ? grades[doc] : 0;
          var relevant = grade > 0;
          var li = el("li", {class: relevant ? "relevant" : null, "data-doc": doc},
            el("span", {class: "doc", text: doc}),
            " score " + fmt(cell.rs[i], 4) + (relevant ? " · relevant (grade " + grade + ")" : ""));
          var text = passages[doc];
          if (text) { var p = el("span", {class: "passage"}); p.appendChild(highlight(text, row.ev)); li.appendChild(p); }
          ol.appendChild(li);
        });
        box.appendChild(el("p", null, el("b", {text: "retrieved"})));
        box.appendChild(ol);
        var ranked = {};
        cell.r.forEach(function (doc) { ranked[doc] = true; });
        var missed = Object.keys(cell.j || {}).filter(function (d) { return cell.j[d] > 0 && !ranked[d]; });
        if (missed.length) box.appendChild(el("p", {class: "bad", text: "relevant, not retrieved: " + missed.join(", ")}));
      }
      detail.appendChild(box);
    });
    Array.prototype.forEach.call(layer.children, function (line) {
      line.classList.toggle("selected", line.getAttribute("data-qid") === row.id);
    });
  }

  function setupControls() {
    var group = data.groups[state.group];
    state.metric = group.headline[0] || group.metrics[0] || null;
    metricSelect.textContent = "";
    group.metrics.forEach(function (m) { metricSelect.appendChild(el("option", {value: m, text: m})); });
    if (state.metric) metricSelect.value = state.metric;
    sortSelect.textContent = "";
    sortSelect.appendChild(el("option", {value: "id", text: "in order"}));
    group.results.forEach(function (r, i) {
      sortSelect.appendChild(el("option", {value: "setup:" + i + ":asc", text: r.label + ": lowest first"}));
      sortSelect.appendChild(el("option", {value: "setup:" + i + ":desc", text: r.label + ": highest first"}));
    });
    sortSelect.appendChild(el("option", {value: "disagreement", text: "disagreement between setups"}));
    sortSelect.appendChild(el("option", {value: "failures", text: "failures first"}));
    state.sort = "id";
    detail.textContent = "Click a question to see its answers, grades and passages.";
    refresh();
  }

  function questions() {
    var section = el("section", {id: "questions"});
    section.appendChild(el("h2", {text: "questions"}));
    var controls = el("div", {class: "controls"});
    var groupSelect = el("select", {id: "q-group"});
    data.groups.forEach(function (g, i) { groupSelect.appendChild(el("option", {value: String(i), text: g.dataset + " · " + g.key.slice(0, 12)})); });
    var search = el("input", {type: "search", id: "q-search", placeholder: "search questions, answers, errors"});
    var filter = el("select", {id: "q-filter"});
    [["all", "all questions"], ["failed", "failed, missing or not run"], ["disagree", "setups disagree"],
     ["unparsed", "unparsed or failed grade"]].forEach(function (o) { filter.appendChild(el("option", {value: o[0], text: o[1]})); });
    metricSelect = el("select", {id: "q-metric"});
    sortSelect = el("select", {id: "q-sort"});
    countLine = el("span", {id: "q-count", class: "muted"});
    controls.appendChild(groupSelect); controls.appendChild(search); controls.appendChild(filter);
    controls.appendChild(el("label", null, "metric ", metricSelect));
    controls.appendChild(el("label", null, "sort ", sortSelect));
    controls.appendChild(countLine);
    section.appendChild(controls);
    listHead = el("div", {class: "qrow qhead"});
    section.appendChild(listHead);
    list = el("div", {class: "vlist", id: "q-list"});
    spacer = el("div");
    layer = el("div", {class: "layer"});
    list.appendChild(spacer); list.appendChild(layer);
    section.appendChild(list);
    detail = el("div", {class: "detail", id: "q-detail"});
    section.appendChild(detail);
    list.addEventListener("scroll", function () { window.requestAnimationFrame(renderRows); });
    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.search = search.value; refresh(); }, 120);
    });
    filter.addEventListener("change", function () { state.filter = filter.value; refresh(); });
    metricSelect.addEventListener("change", function () { state.metric = metricSelect.value; refresh(); });
    sortSelect.addEventListener("change", function () { state.sort = sortSelect.value; refresh(); });
    groupSelect.addEventListener("change", function () { state.group = Number(groupSelect.value); setupControls(); });
    return section;
  }

  // Every benchmark beside the others: each setup's headline metrics, one column per group.
  function overview() {
    if (data.groups.length < 2) return null;
    var section = el("section", {id: "overview"});
    section.appendChild(el("h2", {text: "by benchmark"}));
    var labels = [];
    data.groups.forEach(function (g) {
      g.results.forEach(function (r) { if (labels.indexOf(r.label) < 0) labels.push(r.label); });
    });
    var table = el("table", {class: "overview"});
    var head = el("tr", null, el("th", {class: "name", text: "setup"}));
    var columns = [];
    data.groups.forEach(function (g) {
      g.headline.slice(0, 2).forEach(function (m) {
        columns.push([g, m]);
        head.appendChild(el("th", {title: g.key, text: g.dataset + " " + metricName(m)}));
      });
    });
    table.appendChild(head);
    labels.forEach(function (label) {
      var row = el("tr", null, el("td", {class: "name", text: label}));
      columns.forEach(function (c) {
        var result = c[0].results.filter(function (r) { return r.label === label; })[0];
        var s = result ? summaryOf(result, c[1]) : null;
        row.appendChild(el("td", {text: s && s.mean !== null && s.mean !== undefined ? fmt(s.mean) : "–"}));
      });
      table.appendChild(row);
    });
    section.appendChild(el("div", {class: "wide"}, table));
    return section;
  }

  function manifests() {
    var section = el("section", {id: "manifests"});
    section.appendChild(el("h2", {text: "runs"}));
    data.runs.forEach(function (run) {
      var m = run.manifest || {};
      var facts = [run.kind];
      if (m.config && m.config.seed !== undefined) facts.push("seed " + m.config.seed);
      if (m.versions) facts.push(Object.keys(m.versions).map(function (k) { return k + " " + m.versions[k]; }).join(", "));
      var details = el("details", null, el("summary", {text: run.label + " · " + facts.join(" · ")}),
        el("pre", {text: JSON.stringify(m, null, 1)}));
      section.appendChild(details);
    });
    data.groups.forEach(function (g) {
      section.appendChild(el("details", null, el("summary", {text: g.dataset + ": held fixed (" + g.key.slice(0, 12) + ")"}),
        el("pre", {text: JSON.stringify(g.held_fixed, null, 1)})));
    });
    return section;
  }

  function ready() {
    window.lasagnaReadyMs = performance.now();
    window.lasagnaStartMs = started;
    document.body.setAttribute("data-ready", "1");
  }

  app.textContent = "";
  subtitle();
  notes();
  if (!data.groups.length) app.appendChild(el("p", {class: "note", text: "These run folders hold no results."}));
  var summary = overview();
  if (summary) app.appendChild(summary);
  data.groups.forEach(function (group, gi) { app.appendChild(leaderboard(group, gi)); });
  if (data.groups.length) { app.appendChild(questions()); setupControls(); }
  app.appendChild(manifests());
  Promise.all(pendingCharts.map(function (c) { return drawChart(c[0], c[1], c[2]); }))
    .then(ready, function (error) { console.error(error); ready(); });
})();
