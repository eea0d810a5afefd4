// The new-ticket form's knowledge-base suggestions: while the title is
// typed, the portal's own search (same origin) lists articles that may
// answer the question. Without scripts the form works the same.
(function () {
  'use strict';
  var title = document.getElementById('title');
  var box = document.getElementById('kb-results');
  var list = document.getElementById('kb-list');
  if (!title || !box || !list) { return; }
  var timer = null;
  var last = '';

  function show(articles) {
    list.textContent = '';
    articles.forEach(function (a) {
      var li = document.createElement('li');
      var link = document.createElement('a');
      link.href = a.url;
      link.target = '_blank';
      link.rel = 'noopener';
      link.textContent = a.title;
      li.appendChild(link);
      if (a.summary) {
        var p = document.createElement('p');
        p.className = 'muted';
        p.textContent = a.summary;
        li.appendChild(p);
      }
      list.appendChild(li);
    });
    box.hidden = articles.length === 0;
  }

  function search() {
    var q = title.value.trim();
    if (q === last) { return; }
    last = q;
    if (q.length < 3) { show([]); return; }
    // The sandbox view (the form's env field) asks in the sandbox, so the
    // articles' links keep it.
    var env = document.querySelector('#ticket-form input[name="env"][value="test"]') ? '&env=test' : '';
    fetch('/portal/tickets/knowledge?q=' + encodeURIComponent(q) + env, {credentials: 'same-origin', headers: {'Accept': 'application/json'}})
      .then(function (res) { return res.ok ? res.json() : {articles: []}; })
      .then(function (body) { if (title.value.trim() === q) { show(body.articles || []); } })
      .catch(function () { show([]); });
  }

  title.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(search, 250);
  });
}());
