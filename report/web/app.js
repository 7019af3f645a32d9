/*
 * iowrap report.html: draws the report from the JSON embedded in the page
 * (element #iowrap-report-data; schema in docs/report-format.md, what this
 * file reads in docs/report-html.md).  Everything from the data is hostile:
 * it reaches the page only through textContent or esc(), never as markup.
 * A chart whose data is absent shows a sentence instead of an empty canvas;
 * no chart is given more than MAX_POINTS items (the page says when it cut).
 */
(function () {
	'use strict';

	var MAX_POINTS = 3000; /* per chart: keeps the page responsive */
	var MAX_GANTT = 2000; /* task bars */
	var MAX_GRAPH_NODES = 400; /* data-flow graph */
	var TOP_ROWS = 20; /* rows of the "slowest" and "heaviest" tables */
	var charts = [];

	/* ---------- helpers ---------- */

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		var k;

		for (k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function esc(s) {
		return String(s).replace(/[&<>"']/g, function (c) {
			return '&#' + c.charCodeAt(0) + ';';
		});
	}

	function num(v) {
		return typeof v === 'number' && isFinite(v) ? v : null;
	}

	function arr(v) {
		return Array.isArray(v) ? v : [];
	}

	function str(v) {
		return v === undefined || v === null ? '' : String(v);
	}

	function bytes(v) {
		var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
		var i = 0;

		v = num(v);
		if (v === null)
			return '–';
		while (Math.abs(v) >= 1024 && i < u.length - 1) {
			v /= 1024;
			i++;
		}
		return (i ? v.toFixed(v < 10 ? 2 : 1) : String(v)) + ' ' + u[i];
	}

	function secs(v) {
		v = num(v);
		if (v === null)
			return '–';
		if (v < 1)
			return (v * 1000).toFixed(v < 0.01 ? 2 : 1) + ' ms';
		if (v < 120)
			return v.toFixed(2) + ' s';
		if (v < 7200)
			return (v / 60).toFixed(1) + ' min';
		return (v / 3600).toFixed(2) + ' h';
	}

	function count(v) {
		v = num(v);
		return v === null ? '–' : v.toLocaleString('en-US');
	}

	function short(s, n) {
		s = str(s);
		return s.length > n ? '…' + s.slice(s.length - n + 1) : s;
	}

	/* Every k-th item so that at most max remain; says what it kept. */
	function cap(items, max) {
		var out = [], step, i;

		if (items.length <= max)
			return { items: items, cut: false, total: items.length };
		step = items.length / max;
		for (i = 0; i < max; i++)
			out.push(items[Math.floor(i * step)]);
		return { items: out, cut: true, total: items.length };
	}

	function absent(box, sentence) {
		box.textContent = '';
		box.className = 'absent';
		box.setAttribute('data-state', 'absent');
		box.textContent = sentence;
	}

	function note(parent, text) {
		parent.appendChild(el('p', { 'class': 'note' }, text));
	}

	/* A chart box in parent: draws option, or the sentence if no data. */
	function chart(parent, name, option, sentence, tall) {
		var box = el('div', { 'class': 'chart' + (tall ? ' tall' : ''),
				      'data-chart': name });
		var c;

		parent.appendChild(box);
		if (!option) {
			absent(box, sentence);
			return null;
		}
		c = echarts.init(box, null, { renderer: 'canvas' });
		option.animation = false;
		c.setOption(option);
		box.setAttribute('data-state', 'drawn');
		charts.push(c);
		return c;
	}

	/* Re-draws a chart box with a new option (or the sentence). */
	function redraw(box, option, sentence) {
		var c = echarts.getInstanceByDom(box);

		if (!option) {
			if (c) {
				charts.splice(charts.indexOf(c), 1);
				c.dispose();
			}
			absent(box, sentence);
			return;
		}
		if (!c) {
			box.textContent = '';
			box.className = 'chart';
			c = echarts.init(box, null, { renderer: 'canvas' });
			charts.push(c);
		}
		option.animation = false;
		c.setOption(option, true);
		box.setAttribute('data-state', 'drawn');
	}

	/* A table column: field key of each row, shown through fmt. */
	function col(title, key, fmt) {
		var isPath = fmt === 'path';

		fmt = isPath || !fmt ? str : fmt;
		return { title: title, path: isPath, num: fmt !== str,
			 get: function (r) { return fmt(r[key]); } };
	}

	function table(parent, cols, rows, rowClass) {
		var wrap = el('div', { 'class': 'tablewrap' });
		var t = el('table'), tr = el('tr');

		cols.forEach(function (c) {
			tr.appendChild(el('th', c.num ? { 'class': 'num' } : {},
					  c.title));
		});
		t.appendChild(el('thead')).appendChild(tr);
		var tb = t.appendChild(el('tbody'));
		rows.forEach(function (r, i) {
			var row = el('tr', rowClass && rowClass(r, i) ?
					       { 'class': rowClass(r, i) } : {});
			cols.forEach(function (c) {
				row.appendChild(el('td', c.num ? { 'class': 'num' } :
						c.path ? { 'class': 'path' } : {},
						c.get(r, i)));
			});
			tb.appendChild(row);
		});
		wrap.appendChild(t);
		parent.appendChild(wrap);
		wrap.setAttribute('data-table', String(rows.length));
		return wrap;
	}

	function section(id, title) {
		var s = el('section', { id: id });
		var a = el('a', { href: '#' + id }, title);

		s.appendChild(el('h2', {}, title));
		document.getElementById('app').appendChild(s);
		document.getElementById('toc').appendChild(a);
		return s;
	}

	function select(parent, label, options, onchange) {
		var id = 'sel-' + label.replace(/\W+/g, '-').toLowerCase();
		var p = el('p'), s = el('select', { id: id });

		p.appendChild(el('label', { 'for': id }, label));
		options.forEach(function (o) {
			s.appendChild(el('option', { value: String(o.value) },
					 o.text));
		});
		s.addEventListener('change', function () {
			onchange(s.value);
		});
		p.appendChild(s);
		parent.appendChild(p);
		return s;
	}

	/* ---------- the data ---------- */

	function load() {
		var node = document.getElementById('iowrap-report-data');

		try {
			return JSON.parse(node ? node.textContent : 'null');
		} catch (e) {
			return { _error: String(e.message || e) };
		}
	}

	function taskLabel(R, i) {
		var t = arr(R.tasks)[i];

		return t ? str(t.name || t.key || ('task ' + i)) : 'task ' + i;
	}

	function fileLabel(R, j) {
		var f = arr(R.files)[j];

		return f ? str(f.path) : 'file ' + j;
	}

	function runtime(t) {
		var r = num(t.runtime_s);

		if (r === null && num(t.start) !== null && num(t.end) !== null)
			r = t.end - t.start;
		return r;
	}

	function ioBytes(t) {
		return (num(t.file_read_bytes) || 0) + (num(t.file_write_bytes) || 0);
	}

	function wfStart(R) {
		var w = R.workflow || {}, s = num(w.start);

		if (s === null)
			arr(R.tasks).forEach(function (t) {
				if (num(t.start) !== null && (s === null || t.start < s))
					s = t.start;
			});
		return s === null ? 0 : s;
	}


	/* ---------- report.json to what the sections draw ---------- */

	/* Log2 buckets ({log2_size, count, time_s}) as a dense array of field. */
	function dense(buckets, field, into) {
		var out = into || [];

		arr(buckets).forEach(function (b) {
			var k = num(b.log2_size);

			if (k === null || k < 0 || k > 63)
				return;
			while (out.length <= k)
				out.push(0);
			out[k] += num(b[field]) || 0;
		});
		return out;
	}

	function viewMount(m) {
		return { mount_point: m.mount_point, fstype: m.fstype, files: m.files,
			 reads: m.reads, writes: m.writes, bytes_read: m.bytes_read,
			 bytes_written: m.bytes_written, read_time_s: m.read_time_s,
			 write_time_s: m.write_time_s, meta_time_s: m.meta_time_s,
			 read_size_log2: dense(m.read_sizes, 'count'),
			 write_size_log2: dense(m.write_sizes, 'count'),
			 time_log2: dense(m.write_sizes, 'time_s', dense(m.read_sizes, 'time_s')) };
	}

	function topFile(tf) {
		var r = tf.read || {}, w = tf.write || {};

		return { path: tf.path, read_bytes: r.bytes, write_bytes: w.bytes,
			 ops: (num(r.ops) || 0) + (num(w.ops) || 0) + (num(tf.opens) || 0) +
			      (num(tf.stats) || 0) + (num(tf.other_meta_ops) || 0) };
	}

	function viewTask(t) {
		var files = arr(t.files);

		return { name: t.name, key: t.key, host: t.host, command: t.command,
			 logical: t.logical_task, start: num(t.start_time_s), end: num(t.end_time_s),
			 runtime_s: num(t.wall_time_s), cpu_s: t.cpu_s, peak_rss_kib: t.peak_rss_kib,
			 exit_code: t.exit_signal !== null && t.exit_signal !== undefined ?
				'signal ' + t.exit_signal : t.exit_code,
			 file_read_bytes: t.file_read_bytes, file_write_bytes: t.file_write_bytes,
			 untraced_read_bytes: t.untraced_read_bytes,
			 untraced_write_bytes: t.untraced_write_bytes, files: t.files_touched,
			 data_time_s: t.data_time_s, meta_time_s: t.meta_time_s,
			 mounts: arr(t.mounts).map(viewMount),
			 top_files: arr(t.top_files_by_bytes).map(function (k) {
				return files[k];
			 }).filter(Boolean).map(topFile) };
	}

	/* Patterns of the tasks' accesses to global file g, e.g. "consecutive". */
	function patterns(R, g, kind) {
		var seen = {};

		arr(g.task_files).forEach(function (tf) {
			var f = arr((arr(R.tasks)[tf[0]] || {}).files)[tf[1]] || {};
			var p = str((f[kind] || {}).pattern);

			if (p && p !== 'none')
				seen[p] = 1;
		});
		return Object.keys(seen).sort().join(', ');
	}

	/* Fig. 4 cells: every task x data file with a known span fraction. */
	function fig4Cells(R) {
		var cells = [];

		arr(R.tasks).forEach(function (t, i) {
			arr(t.files).forEach(function (tf) {
				var g = arr(R.files)[tf.file];

				if (num(tf.access_span_fraction) === null || !g || g.system ||
				    tf.executed)
					return;
				cells.push({ task: i, file: tf.file, fraction: tf.access_span_fraction });
			});
		});
		return cells;
	}

	/* The critical path as steps: each edge of wcp.path with its target. */
	function wcpSteps(wcp) {
		var v = arr(wcp.vertices), e = arr(wcp.edges);

		return arr(wcp.path).map(function (k) {
			var edge = e[k] || {}, from = v[edge.from] || {}, to = v[edge.to] || {};

			return { kind: edge.mutation, task: edge.task, file: to.file,
				 path: to.path, from_path: from.path, cost_s: edge.cost_s,
				 location: to.location };
		});
	}

	function view(R) {
		var w = R.workflow || {}, tasks = arr(R.tasks).map(viewTask), hosts = {};
		var warn = R.warnings || {};

		tasks.forEach(function (t) { hosts[str(t.host)] = 1; });
		return {
			title: arr(R.inputs).join(' ') || (count(w.tasks) + ' tasks'),
			version: R.iowrap_version,
			warnings: arr(warn.messages), warnings_total: num(warn.count),
			workflow: { tasks: w.tasks, hosts: tasks.length ? Object.keys(hosts).length : null,
				    start: num(w.start_time_s), end: num(w.end_time_s),
				    elapsed_s: w.wall_time_s, cpu_s: w.cpu_total_s,
				    file_read_bytes: w.file_read_bytes, file_write_bytes: w.file_write_bytes,
				    untraced_read_bytes: w.untraced_read_bytes,
				    untraced_write_bytes: w.untraced_write_bytes,
				    files: w.files, events: w.events },
			tasks: tasks,
			logical_tasks: arr(R.logical_tasks).map(function (g) {
				return { name: g.name, instances: g.tasks, runtime_s_total: g.wall_time_total_s,
					 runtime_s_max: g.wall_time_max_s, cpu_s: g.cpu_s,
					 file_read_bytes: g.file_read_bytes, file_write_bytes: g.file_write_bytes };
			}),
			files: arr(R.files).map(function (g) {
				return { path: g.path, system: g.system, read_bytes: g.bytes_read,
					 write_bytes: g.bytes_written, reread_bytes: g.reread_bytes,
					 readers: g.readers, writers: g.writers,
					 read_pattern: patterns(R, g, 'read'),
					 write_pattern: patterns(R, g, 'write') };
			}),
			fig4: { cells: fig4Cells(R) },
			accesses: arr(R.accesses),
			dataflow: R.data_flow || {},
			wcp: { length_s: (R.wcp || {}).length_s, steps: wcpSteps(R.wcp || {}) }
		};
	}

	/* ---------- sections ---------- */

	function summary(R) {
		var s = section('summary', 'Workflow summary');
		var w = R.workflow || {}, tasks = arr(R.tasks);
		var cards = el('div', { 'class': 'cards' });
		var items = [
			['tasks', count(num(w.tasks) !== null ? w.tasks : tasks.length)],
			['hosts', count(w.hosts)],
			['elapsed', secs(w.elapsed_s)],
			['CPU time', secs(w.cpu_s)],
			['read from files', bytes(w.file_read_bytes)],
			['written to files', bytes(w.file_write_bytes)],
			['pipes/sockets read', bytes(w.untraced_read_bytes)],
			['pipes/sockets written', bytes(w.untraced_write_bytes)],
			['files', count(num(w.files) !== null ? w.files :
				       arr(R.files).length)],
			['I/O events', count(w.events)]
		];

		items.forEach(function (it) {
			var c = el('div', { 'class': 'card' });

			c.appendChild(el('div', { 'class': 'v' }, it[1]));
			c.appendChild(el('div', { 'class': 'k' }, it[0]));
			cards.appendChild(c);
		});
		s.appendChild(cards);
		warnings(s, R);
		logical(s, R);
	}

	function warnings(s, R) {
		var list = arr(R.warnings), total = num(R.warnings_total);
		var ul;

		if (!list.length)
			return;
		s.appendChild(el('h3', {}, 'Warnings'));
		ul = s.appendChild(el('ul', { 'class': 'warn' }));
		list.slice(0, 50).forEach(function (w) {
			ul.appendChild(el('li', {}, w));
		});
		if ((total || list.length) > 50)
			note(s, 'Showing 50 of ' + count(total || list.length) +
				' warnings; report.json lists those kept.');
	}

	function logical(s, R) {
		var rows = arr(R.logical_tasks);

		s.appendChild(el('h3', {}, 'Logical tasks (Nextflow process, Snakemake rule, --task)'));
		if (!rows.length) {
			s.appendChild(el('p', { 'class': 'absent' },
					 'The report names no logical tasks.'));
			return;
		}
		rows = rows.slice().sort(function (a, b) {
			return (num(b.runtime_s_total) || 0) - (num(a.runtime_s_total) || 0);
		});
		table(s, [col('name', 'name'), col('instances', 'instances', count),
			  col('runtime total', 'runtime_s_total', secs),
			  col('runtime max', 'runtime_s_max', secs), col('CPU', 'cpu_s', secs),
			  col('read', 'file_read_bytes', bytes),
			  col('written', 'file_write_bytes', bytes)], rows.slice(0, 200));
	}

	/* Lanes per host so that overlapping tasks do not hide each other. */
	function ganttLanes(R, tasks) {
		var byHost = {}, lanes = [], out = [];

		tasks.forEach(function (t) {
			var h = str(t.t.host) || '(unknown host)';

			(byHost[h] = byHost[h] || []).push(t);
		});
		Object.keys(byHost).sort().forEach(function (h) {
			var ends = [];

			byHost[h].sort(function (a, b) { return a.t.start - b.t.start; });
			byHost[h].forEach(function (x) {
				var l = 0;

				while (l < ends.length && ends[l] > x.t.start)
					l++;
				ends[l] = x.t.end;
				x.lane = lanes.length + l;
			});
			ends.forEach(function (e, l) {
				lanes.push(h + (ends.length > 1 ? ' #' + (l + 1) : ''));
			});
			out = out.concat(byHost[h]);
		});
		return { lanes: lanes, tasks: out };
	}

	function gantt(R) {
		var s = section('gantt', 'Tasks over time, per host');
		var t0 = wfStart(R), names = {}, colors = 0;
		var all = arr(R.tasks).map(function (t, i) {
			return { t: t, i: i };
		}).filter(function (x) {
			return num(x.t.start) !== null && num(x.t.end) !== null;
		});
		var c = cap(all, MAX_GANTT), g, option = null;

		if (c.items.length) {
			g = ganttLanes(R, c.items);
			option = {
				tooltip: { formatter: function (p) {
					var t = arr(R.tasks)[p.value[3]];

					return esc(taskLabel(R, p.value[3])) + '<br>' +
					       esc(str(t.host)) + ' · ' + secs(runtime(t)) +
					       '<br>read ' + bytes(t.file_read_bytes) +
					       ', written ' + bytes(t.file_write_bytes);
				} },
				grid: { left: 140, right: 30, top: 20, bottom: 50 },
				xAxis: { type: 'value', name: 's since start', nameLocation: 'middle',
					 nameGap: 28, min: 0 },
				yAxis: { type: 'category', data: g.lanes, inverse: true,
					 axisLabel: { formatter: function (v) { return short(v, 22); } } },
				dataZoom: [{ type: 'inside', xAxisIndex: 0 },
					   { type: 'slider', xAxisIndex: 0, height: 14, bottom: 4 }],
				series: [{
					type: 'custom',
					encode: { x: [0, 1], y: 2 },
					renderItem: function (params, api) {
						var a = api.coord([api.value(0), api.value(2)]);
						var b = api.coord([api.value(1), api.value(2)]);
						var h = api.size([0, 1])[1] * 0.7;
						var lg = str(arr(R.tasks)[api.value(3)].logical ||
							     arr(R.tasks)[api.value(3)].name);

						var w = Math.max(b[0] - a[0], 1);

						if (!(lg in names))
							names[lg] = colors++;
						return { type: 'group', children: [
							{ type: 'rect', shape: { x: a[0], y: a[1] - h / 2,
								width: w, height: h },
							  style: { fill: PALETTE[names[lg] % PALETTE.length] } },
							{ type: 'text', ignore: w < 40 || h < 10,
							  style: { x: a[0] + 3, y: a[1], text: short(taskLabel(R, api.value(3)), Math.floor(w / 7)),
								   fill: '#fff', verticalAlign: 'middle', fontSize: 11 } }
						] };
					},
					data: g.tasks.map(function (x) {
						return [x.t.start - t0, x.t.end - t0, x.lane, x.i];
					})
				}]
			};
		}
		chart(s, 'gantt', option,
		      'No task has a known start and end time, so there is no timeline to draw.',
		      c.items.length > 12);
		if (c.cut)
			note(s, 'Showing ' + count(c.items.length) + ' of ' + count(c.total) +
				' tasks (evenly sampled); the tables below rank them all.');
	}

	var PALETTE = ['#2f6db5', '#e08a1e', '#3a9e5c', '#8e5bb5', '#c94f4f',
		       '#2aa1a8', '#a8842a', '#6b7a8f', '#d46fa6', '#5a8f29'];

	function taskTables(R) {
		var s = section('tasks', 'Slowest and most I/O-heavy tasks');
		var tasks = arr(R.tasks).map(function (t, i) { return { t: t, i: i }; });
		var cols = [
			{ title: 'task', get: function (x) { return taskLabel(R, x.i); } },
			{ title: 'host', get: function (x) { return str(x.t.host); } },
			{ title: 'runtime', num: 1, get: function (x) { return secs(runtime(x.t)); } },
			{ title: 'CPU', num: 1, get: function (x) { return secs(x.t.cpu_s); } },
			{ title: 'peak RSS', num: 1, get: function (x) {
				return num(x.t.peak_rss_kib) === null ? '–' : bytes(x.t.peak_rss_kib * 1024);
			} },
			{ title: 'read', num: 1, get: function (x) { return bytes(x.t.file_read_bytes); } },
			{ title: 'written', num: 1, get: function (x) { return bytes(x.t.file_write_bytes); } },
			{ title: 'files', num: 1, get: function (x) { return count(x.t.files); } }
		];

		if (!tasks.length) {
			s.appendChild(el('p', { 'class': 'absent' }, 'The report holds no tasks.'));
			return;
		}
		s.appendChild(el('h3', {}, 'Slowest'));
		table(s, cols, tasks.slice().sort(function (a, b) {
			return (runtime(b.t) || 0) - (runtime(a.t) || 0);
		}).slice(0, TOP_ROWS));
		s.appendChild(el('h3', {}, 'Most bytes read and written'));
		table(s, cols, tasks.slice().sort(function (a, b) {
			return ioBytes(b.t) - ioBytes(a.t);
		}).slice(0, TOP_ROWS));
	}

	/* "4K" for bucket 12: sizes in [2^12, 2^13) bytes. */
	function log2Label(i) {
		var u = ['B', 'K', 'M', 'G', 'T', 'P', 'E'];

		return Math.pow(2, i % 10) + u[Math.floor(i / 10)];
	}

	/* Bars per mount over log2 buckets; null when no mount has counts. */
	function histOption(mounts, key, yName, title) {
		var len = 0, series;

		mounts.forEach(function (m) {
			len = Math.max(len, arr(m[key]).length);
		});
		series = mounts.filter(function (m) {
			return arr(m[key]).some(function (v) { return num(v) > 0; });
		}).map(function (m) {
			return { type: 'bar', name: short(str(m.mount_point) +
				(m.fstype ? ' (' + m.fstype + ')' : ''), 40),
				data: arr(m[key]).slice(0, 64).map(function (v) { return num(v) || 0; }) };
		});
		if (!series.length)
			return null;
		len = Math.min(len, 64);
		return {
			title: { text: title, textStyle: { fontSize: 13 } },
			tooltip: { trigger: 'axis' },
			legend: { top: 0, right: 0, type: 'scroll', width: '60%' },
			grid: { left: 60, right: 20, top: 40, bottom: 40 },
			xAxis: { type: 'category', name: 'size ≥', nameLocation: 'middle', nameGap: 26,
				 data: Array.apply(null, Array(len)).map(function (_, i) {
					return log2Label(i);
				 }) },
			yAxis: { type: 'value', name: yName },
			series: series
		};
	}

	function taskDetail(R) {
		var s = section('task', 'Per task');
		var tasks = arr(R.tasks), body, boxes = {};

		if (!tasks.length) {
			s.appendChild(el('p', { 'class': 'absent' }, 'The report holds no tasks.'));
			return;
		}
		var order = tasks.map(function (t, i) { return i; }).sort(function (a, b) {
			return ioBytes(tasks[b]) - ioBytes(tasks[a]);
		});
		select(s, 'Task', order.map(function (i) {
			return { value: i, text: short(taskLabel(R, i), 90) + ' — ' +
				 bytes(ioBytes(tasks[i])) };
		}), show);
		body = s.appendChild(el('div'));
		boxes.cards = body.appendChild(el('div', { 'class': 'cards' }));
		boxes.files = body.appendChild(el('div'));
		boxes.mounts = body.appendChild(el('div'));
		chart(s, 'task-read-sizes', { series: [] }, '');
		chart(s, 'task-write-sizes', { series: [] }, '');
		chart(s, 'task-size-time', { series: [] }, '');
		show(order[0]);

		function show(i) {
			var t = tasks[+i] || {}, mounts = arr(t.mounts);
			var q = function (n) { return s.querySelector('[data-chart="' + n + '"]'); };

			boxes.cards.textContent = '';
			[['runtime', secs(runtime(t))], ['CPU', secs(t.cpu_s)],
			 ['peak RSS', num(t.peak_rss_kib) === null ? '–' : bytes(t.peak_rss_kib * 1024)],
			 ['files read', bytes(t.file_read_bytes)], ['files written', bytes(t.file_write_bytes)],
			 ['pipes/sockets read', bytes(t.untraced_read_bytes)],
			 ['pipes/sockets written', bytes(t.untraced_write_bytes)],
			 ['files touched', count(t.files)], ['data time', secs(t.data_time_s)],
			 ['metadata time', secs(t.meta_time_s)], ['host', str(t.host) || '–'],
			 ['exit', t.exit_code === undefined || t.exit_code === null ? '–' : str(t.exit_code)]
			].forEach(function (it) {
				var c = el('div', { 'class': 'card' });

				c.appendChild(el('div', { 'class': 'v' }, it[1]));
				c.appendChild(el('div', { 'class': 'k' }, it[0]));
				boxes.cards.appendChild(c);
			});
			if (t.command) {
				boxes.cards.appendChild(el('div', { 'class': 'card path', style: 'grid-column: 1 / -1' },
							   short(t.command, 400)));
			}
			boxes.files.textContent = '';
			boxes.files.appendChild(el('h3', {}, 'Top files'));
			if (arr(t.top_files).length)
				table(boxes.files, [col('path', 'path', 'path'),
					col('read', 'read_bytes', bytes), col('written', 'write_bytes', bytes),
					col('operations', 'ops', count)], arr(t.top_files).slice(0, 100));
			else
				boxes.files.appendChild(el('p', { 'class': 'absent' },
					'No file I/O recorded for this task (traced below --level files, or it touched no files).'));
			boxes.mounts.textContent = '';
			boxes.mounts.appendChild(el('h3', {}, 'Per mount'));
			if (mounts.length)
				table(boxes.mounts, [col('mount', 'mount_point', 'path'),
					col('type', 'fstype'), col('files', 'files', count),
					col('reads', 'reads', count), col('writes', 'writes', count),
					col('read', 'bytes_read', bytes), col('written', 'bytes_written', bytes),
					col('read time', 'read_time_s', secs),
					col('write time', 'write_time_s', secs),
					col('metadata time', 'meta_time_s', secs)], mounts);
			else
				boxes.mounts.appendChild(el('p', { 'class': 'absent' },
					'No per-mount figures for this task.'));
			redraw(q('task-read-sizes'), histOption(mounts, 'read_size_log2', 'reads',
				'Reads per size, per mount (log2 buckets)'),
				'No read size histogram for this task: it read no file, or was traced below --level full.');
			redraw(q('task-write-sizes'), histOption(mounts, 'write_size_log2', 'writes',
				'Writes per size, per mount (log2 buckets)'),
				'No write size histogram for this task: it wrote no file, or was traced below --level full.');
			redraw(q('task-size-time'), histOption(mounts, 'time_log2', 'seconds',
				'Time in reads and writes per size, per mount (log2 buckets)'),
				'No read or write times for this task: it moved no file data, or was traced below --level full.');
		}
	}

	/* Fig. 4: first-to-last access time over the task's runtime. */
	function fig4(R) {
		var s = section('fig4', 'Per file: access span over task runtime (Fig. 4)');
		var f4 = R.fig4 || {}, cells = arr(f4.cells).filter(function (c) {
			return num(c.task) !== null && num(c.file) !== null && num(c.fraction) !== null;
		});
		var c = cap(cells, MAX_POINTS), ti = {}, fi = {}, tl = [], fl = [], option = null;

		note(s, 'Each cell: (last access − first access) / task runtime, for one task and one file. ' +
			'Near 1: the task used the file all its life (stream it); near 0: one burst (stage it).');
		c.items.forEach(function (x) {
			if (!(x.task in ti)) {
				ti[x.task] = tl.length;
				tl.push(taskLabel(R, x.task));
			}
			if (!(x.file in fi)) {
				fi[x.file] = fl.length;
				fl.push(fileLabel(R, x.file));
			}
		});
		if (c.items.length)
			option = {
				tooltip: { formatter: function (p) {
					return esc(tl[p.value[1]]) + '<br>' + esc(fl[p.value[0]]) +
					       '<br>fraction ' + p.value[2].toFixed(3);
				} },
				grid: { left: 160, right: 70, top: 10, bottom: 120 },
				xAxis: { type: 'category', data: fl, axisLabel: { rotate: 40,
					 formatter: function (v) { return short(v, 24); } } },
				yAxis: { type: 'category', data: tl, axisLabel: {
					 formatter: function (v) { return short(v, 22); } } },
				visualMap: { min: 0, max: 1, calculable: true, orient: 'vertical',
					     right: 0, top: 'center', itemHeight: 160,
					     inRange: { color: ['#f7fbff', '#6baed6', '#08306b'] } },
				dataZoom: [{ type: 'inside', xAxisIndex: 0 }, { type: 'inside', yAxisIndex: 0 }],
				series: [{ type: 'heatmap', data: c.items.map(function (x) {
					return [fi[x.file], ti[x.task], Math.max(0, Math.min(1, x.fraction))];
				}) }]
			};
		chart(s, 'fig4', option,
		      'No task read or wrote a file with known times, so there is no access span to show.', true);
		if (c.cut || f4.truncated)
			note(s, 'Showing ' + count(c.items.length) + ' of ' +
				count(num(f4.total) || c.total) + ' task × file cells.');
		filesTable(s, R);
	}

	function filesTable(s, R) {
		var all = arr(R.files), files = all.map(function (f, j) {
			return { f: f, j: j };
		}).filter(function (x) { return !x.f.system; });

		s.appendChild(el('h3', {}, 'Files by bytes moved'));
		if (files.length < all.length)
			note(s, count(all.length - files.length) +
				' system files (libraries, locale data, /etc) are left out here and in the heat map.');
		if (!files.length) {
			s.appendChild(el('p', { 'class': 'absent' }, 'The report lists no files.'));
			return;
		}
		files.sort(function (a, b) {
			return ((num(b.f.read_bytes) || 0) + (num(b.f.write_bytes) || 0)) -
			       ((num(a.f.read_bytes) || 0) + (num(a.f.write_bytes) || 0));
		});
		table(s, [
			{ title: 'path', path: 1, get: function (x) { return str(x.f.path); } },
			{ title: 'read', num: 1, get: function (x) { return bytes(x.f.read_bytes); } },
			{ title: 'written', num: 1, get: function (x) { return bytes(x.f.write_bytes); } },
			{ title: 're-read', num: 1, get: function (x) { return bytes(x.f.reread_bytes); } },
			{ title: 'readers', num: 1, get: function (x) { return count(x.f.readers); } },
			{ title: 'writers', num: 1, get: function (x) { return count(x.f.writers); } },
			{ title: 'read pattern', get: function (x) { return str(x.f.read_pattern) || '–'; } },
			{ title: 'write pattern', get: function (x) { return str(x.f.write_pattern) || '–'; } }
		], files.slice(0, 500));
		if (files.length > 500)
			note(s, 'Showing the 500 files that moved most bytes of ' + count(files.length) + '.');
	}

	/* Fig. 5: one bar per access, x = time, from offset to offset+size. */
	function fig5Option(R, acc, t0) {
		var pts = arr(acc.points).filter(function (p) {
			return Array.isArray(p) && num(p[1]) !== null && num(p[3]) !== null &&
			       num(p[4]) !== null;
		});
		var c = cap(pts, MAX_POINTS), tasks = {};

		if (!c.items.length)
			return { option: null, c: c };
		c.items.forEach(function (p) { tasks[p[0]] = 1; });
		return { c: c, option: {
			tooltip: { formatter: function (p) {
				var v = p.value;

				return esc(taskLabel(R, v[5])) + '<br>' + (v[6] === 'W' ? 'write' : 'read') +
				       ' of ' + bytes(v[3] - v[2]) + ' at offset ' + count(v[2]) +
				       '<br>t = ' + v[0].toFixed(6) + ' s';
			} },
			legend: { data: ['read', 'write'], top: 0 },
			grid: { left: 90, right: 30, top: 30, bottom: 50 },
			xAxis: { type: 'value', name: 's since start', nameLocation: 'middle',
				 nameGap: 28, scale: true },
			yAxis: { type: 'value', name: 'file offset', axisLabel: {
				 formatter: function (v) { return bytes(v); } } },
			dataZoom: [{ type: 'inside', xAxisIndex: 0 }, { type: 'inside', yAxisIndex: 0 },
				   { type: 'slider', xAxisIndex: 0, height: 14, bottom: 4 }],
			series: ['R', 'W'].map(function (kind) {
				return {
					type: 'custom', name: kind === 'R' ? 'read' : 'write',
					itemStyle: { color: kind === 'R' ? '#2f6db5' : '#e08a1e' },
					encode: { x: [0, 1], y: [2, 3] },
					renderItem: function (params, api) {
						var a = api.coord([api.value(0), api.value(3)]);
						var b = api.coord([api.value(1), api.value(2)]);

						return { type: 'rect', shape: { x: a[0], y: a[1],
							width: Math.max(b[0] - a[0], 2),
							height: Math.max(b[1] - a[1], 2) },
							style: api.style() };
					},
					data: c.items.filter(function (p) {
						return (p[5] === 'W' ? 'W' : 'R') === kind;
					}).map(function (p) {
						var end = num(p[2]) !== null ? p[2] : p[1];

						return [p[1] - t0, end - t0, p[3], p[3] + p[4], p[0], p[0], kind];
					})
				};
			})
		} };
	}

	function fig5(R) {
		var s = section('fig5', 'Per file: accesses over time (Fig. 5)');
		var accs = arr(R.accesses).filter(function (a) {
			return a && num(a.file) !== null && arr(a.points).length;
		});
		var t0 = wfStart(R), info = el('p', { 'class': 'note' }), box;

		note(s, 'One bar per read or write: x from its start to its end, y from offset to offset + size, across all tasks that touched the file.');
		if (!accs.length) {
			chart(s, 'fig5', null,
			      'No per-access data in this report: report.json has no accesses (they come from traces at --level full).');
			return;
		}
		select(s, 'File', accs.map(function (a, k) {
			return { value: k, text: short(fileLabel(R, a.file), 100) + ' — ' +
				 count(num(a.total) || arr(a.points).length) + ' accesses' };
		}), show);
		chart(s, 'fig5', { series: [] }, '', true);
		box = s.querySelector('[data-chart="fig5"]');
		s.appendChild(info);
		show(0);

		function show(k) {
			var a = accs[+k], r = fig5Option(R, a, t0), total = num(a.total);
			var shown = r.c.items.length;

			redraw(box, r.option, 'No access of this file has a known time, offset and size.');
			info.textContent = (r.c.cut || (total && total > r.c.total)) ?
				'Showing ' + count(shown) + ' of ' + count(total || r.c.total) +
				' accesses (evenly sampled).' : '';
		}
	}

	/*
	 * Left to right by depth in the DAG (longest chain of edges from a
	 * source), top to bottom by start time within a depth: the flow reads
	 * like the workflow ran.  Cycles (a task re-reading what it wrote) stop
	 * the relaxation after as many rounds as there are nodes.
	 */
	function layers(list, links, width, height) {
		var index = {}, depth = list.map(function () { return 0; });
		var rows = {}, round, changed;

		list.forEach(function (n, k) { index[n.id] = k; });
		for (round = 0, changed = true; changed && round < list.length; round++) {
			changed = false;
			links.forEach(function (l) {
				var a = index[l.source], b = index[l.target];

				if (depth[b] < depth[a] + 1) {
					depth[b] = depth[a] + 1;
					changed = true;
				}
			});
		}
		var pos = list.map(function (n, k) {
			return { k: k, x: n.x };
		}).sort(function (a, b) {
			return a.x - b.x;
		}).reduce(function (out, it) {
			var d = depth[it.k];

			rows[d] = (rows[d] || 0) + 1;
			out[it.k] = [d, rows[d]];
			return out;
		}, []);
		/* The graph keeps x:y proportions: spread to the box's shape. */
		var maxD = Math.max.apply(null, depth) || 1;
		var maxR = Math.max.apply(null, Object.keys(rows).map(function (d) { return rows[d]; }));
		var sx = Math.max(width - 220, 200) / maxD, sy = height / Math.max(maxR, 2);

		return pos.map(function (p) { return [p[0] * sx, p[1] * sy]; });
	}

	/* Data flow: tasks and files as nodes, writes and reads as edges. */
	function dataflow(R) {
		var s = section('dataflow', 'Data flow and Workflow Critical Path');
		var df = R.dataflow || {}, edges = arr(df.edges), wcp = R.wcp || {};
		var steps = arr(wcp.steps), onPath = {}, nodes = {}, list = [], links = [];
		var t0 = wfStart(R), option = null, cut = false;

		steps.forEach(function (st) {
			if (num(st.task) !== null)
				onPath['t' + st.task] = 1;
			if (num(st.file) !== null)
				onPath['f' + st.file] = 1;
		});
		function node(id, name, kind, x) {
			if (!(id in nodes)) {
				if (list.length >= MAX_GRAPH_NODES) {
					cut = true;
					return null;
				}
				nodes[id] = list.length;
				list.push({ id: id, name: name, kind: kind, x: x });
			}
			return id;
		}
		edges.forEach(function (e) {
			var w = arr(R.tasks)[e.writer] || {}, r = arr(R.tasks)[e.reader] || {};
			/* Renamed between writer and reader: the file is the reader's name. */
			var as = num(e.written_as) !== null ? fileLabel(R, e.written_as) : null;
			var a, f, b;

			if (num(e.file) === null)
				return;
			a = num(e.writer) !== null ? node('t' + e.writer, taskLabel(R, e.writer), 'task',
							  (num(w.start) || t0) - t0) : null;
			f = node('f' + e.file, fileLabel(R, e.file), 'file',
				 (num(w.end) || num(r.start) || t0) - t0);
			b = num(e.reader) !== null ? node('t' + e.reader, taskLabel(R, e.reader), 'task',
							  (num(r.start) || t0) - t0) : null;
			if (a && f)
				links.push({ source: a, target: f, bytes: e.bytes, as: as });
			if (f && b)
				links.push({ source: f, target: b, bytes: e.bytes, as: as });
		});
		if (list.length) {
			var pos = layers(list, links, s.clientWidth, 440);
			option = {
				tooltip: { formatter: function (p) {
					if (p.dataType === 'edge')
						return esc(p.data.sourceName) + ' → ' + esc(p.data.targetName) +
						       '<br>' + bytes(p.data.bytes) +
						       (p.data.writtenAs ? '<br>written as ' +
							esc(p.data.writtenAs) : '');
					return (p.data.kind === 'task' ? 'task ' : 'file ') + esc(p.data.name);
				} },
				legend: { data: ['task', 'file', 'critical path'], top: 0 },
				series: [{
					type: 'graph', layout: 'none', roam: true, top: 40, bottom: 20,
					left: 20, right: 180,
					categories: [{ name: 'task', itemStyle: { color: '#2f6db5' } },
						     { name: 'file', itemStyle: { color: '#9aa5b1' } },
						     { name: 'critical path', itemStyle: { color: '#c0392b' } }],
					label: { show: list.length <= 60, position: 'right', fontSize: 10,
						 formatter: function (p) { return short(p.data.name, 28); } },
					edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 6,
					data: list.map(function (n, k) {
						return { id: n.id, name: n.name, kind: n.kind,
							 x: pos[k][0], y: pos[k][1],
							 symbol: n.kind === 'task' ? 'roundRect' : 'circle',
							 symbolSize: n.kind === 'task' ? 14 : 8,
							 category: onPath[n.id] ? 2 : n.kind === 'task' ? 0 : 1 };
					}),
					links: links.map(function (l) {
						var crit = onPath[l.source] && onPath[l.target];

						return { source: l.source, target: l.target, bytes: l.bytes,
							 writtenAs: l.as,
							 sourceName: list[nodes[l.source]].name,
							 targetName: list[nodes[l.target]].name,
							 lineStyle: { color: crit ? '#c0392b' : '#b8c2cc',
								      width: crit ? 3 : 1, opacity: 0.9 } };
					})
				}]
			};
		}
		chart(s, 'dataflow', option,
		      'No task read a file another task wrote, so there is no data flow to draw.', true);
		if (cut)
			note(s, 'Showing the first ' + MAX_GRAPH_NODES + ' tasks and files of the graph; report.json has all edges.');
		flowLists(s, R, df);
		wcpTable(s, R, wcp, steps);
	}

	function flowLists(s, R, df) {
		[['Files written and never read', df.written_never_read],
		 ['Files read by many tasks', df.read_by_many]].forEach(function (x) {
			var ids = arr(x[1]);

			s.appendChild(el('h3', {}, x[0]));
			if (!ids.length) {
				s.appendChild(el('p', { 'class': 'absent' }, 'None.'));
				return;
			}
			table(s, [
				{ title: 'path', path: 1, get: function (j) { return fileLabel(R, j); } },
				{ title: 'readers', num: 1, get: function (j) {
					return count((arr(R.files)[j] || {}).readers);
				} }
			], ids.slice(0, 200));
		});
	}

	function wcpTable(s, R, wcp, steps) {
		s.appendChild(el('h3', {}, 'Workflow Critical Path' +
			(num(wcp.length_s) !== null ? ': ' + secs(wcp.length_s) : '')));
		if (!steps.length) {
			s.appendChild(el('p', { 'class': 'absent' },
				'No critical path: the traces show no data passed between tasks.'));
			return;
		}
		table(s, [
			{ title: '#', num: 1, get: function (st, i) { return i + 1; } },
			{ title: 'step', get: function (st) { return str(st.kind); } },
			{ title: 'task', get: function (st) {
				return num(st.task) !== null ? taskLabel(R, st.task) : '–';
			} },
			{ title: 'from', path: 1, get: function (st) {
				return str(st.from_path) || '(start)';
			} },
			{ title: 'to', path: 1, get: function (st) {
				return str(st.path || (num(st.file) !== null ? fileLabel(R, st.file) : '')) || '(end)';
			} },
			{ title: 'where', get: function (st) { return str(st.location); } },
			{ title: 'cost', num: 1, get: function (st) { return secs(st.cost_s); } }
		], steps, function () { return 'crit'; });
	}

	function failed(msg) {
		var app = document.getElementById('app');

		app.appendChild(el('p', { 'class': 'absent', 'data-state': 'absent' }, msg));
	}

	function main() {
		var R = load();

		if (!R || typeof R !== 'object' || R._error) {
			failed('The report data embedded in this page could not be read' +
			       (R && R._error ? ' (' + R._error + ')' : '') +
			       '; open report.json next to it instead.');
			return;
		}
		if (typeof echarts === 'undefined') {
			failed('The charting library did not load; the tables below still show the figures.');
			return;
		}
		R = view(R);
		document.getElementById('subtitle').textContent = R.title +
			(R.version ? ' · iowrap ' + R.version : '');
		[summary, gantt, taskTables, taskDetail, fig4, fig5, dataflow].forEach(function (f) {
			try {
				f(R);
			} catch (e) {
				failed('A section could not be drawn: ' + (e.message || e));
				throw e;
			}
		});
		window.addEventListener('resize', function () {
			charts.forEach(function (c) { c.resize(); });
		});
		document.body.setAttribute('data-ready', '1');
	}

	main();
}());
