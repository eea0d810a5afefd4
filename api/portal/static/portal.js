// The portal's progressive enhancement: every page works without it.
// - "Get an API token" exchanges the session for an access token;
// - progress bars with data-stream follow an operation's event stream;
// - <time class="countdown"> counts down to its datetime;
// - forms with data-autosubmit submit themselves; buttons with
//   data-confirm ask first.
(function () {
  'use strict';
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  var csrf = csrfMeta ? csrfMeta.getAttribute('content') : '';
  var terminal = ['completed', 'failed', 'cancelled', 'rolled_back', 'partially_completed'];

  function onReady(fn) {
    if (document.readyState !== 'loading') { fn(); } else { document.addEventListener('DOMContentLoaded', fn); }
  }

  function tokenButton() {
    var button = document.getElementById('get-token');
    if (!button) { return; }
    button.addEventListener('click', function () {
      var out = document.getElementById('token');
      var env = button.getAttribute('data-env') === 'test' ? '?env=test' : '';
      fetch('/v1/auth/session/token' + env, {method: 'POST', credentials: 'same-origin', headers: {'X-CSRF-Token': csrf, 'Accept': 'application/json'}})
        .then(function (res) {
          return res.json().then(function (body) {
            out.hidden = false;
            out.textContent = res.ok ? body.access_token : ('Error: ' + (body.error && body.error.message));
            out.dataset.status = String(res.status);
          });
        });
    });
  }

  function follow(bar) {
    var source = new EventSource(bar.getAttribute('data-stream'));
    var id = bar.getAttribute('data-op');
    source.addEventListener('operation', function (e) {
      var op = JSON.parse(e.data);
      var percent = op.progress ? op.progress.percent : 0;
      bar.value = percent;
      bar.textContent = percent + ' %';
      document.querySelectorAll('[data-op="' + op.request_id + '"]').forEach(function (el) {
        if (el.classList.contains('op-status')) { el.textContent = op.status; }
      });
      (op.steps || []).forEach(function (step) {
        var row = document.querySelector('[data-step="' + step.name + '"]');
        if (row) { row.textContent = step.status; row.className = 'badge s-' + step.status; }
      });
      if (terminal.indexOf(op.status) >= 0) {
        source.close();
        var done = document.getElementById('op-done');
        if (done) {
          var link = document.getElementById('op-service');
          if (link && op.result && op.result.service_id) {
            link.href = '/portal/services/' + op.result.service_id + (location.search || '');
            link.hidden = false;
          }
          done.textContent = 'This operation ended: ' + op.status + '.';
          done.dataset.status = op.status;
          done.hidden = false;
        }
      }
    });
    source.addEventListener('error', function () {
      if (source.readyState === EventSource.CLOSED) { bar.removeAttribute('data-stream'); }
    });
    if (id === null) { bar.setAttribute('data-op', ''); }
  }

  function countdowns() {
    var clocks = document.querySelectorAll('time.countdown');
    if (!clocks.length) { return; }
    function tick() {
      clocks.forEach(function (el) {
        var due = Date.parse(el.getAttribute('datetime'));
        if (isNaN(due)) { return; }
        var left = Math.round((due - Date.now()) / 1000);
        var sign = left < 0 ? 'overdue by ' : '';
        left = Math.abs(left);
        var h = Math.floor(left / 3600), m = Math.floor(left % 3600 / 60), s = left % 60;
        el.textContent = sign + h + 'h ' + (m < 10 ? '0' : '') + m + 'm ' + (s < 10 ? '0' : '') + s + 's';
        el.classList.toggle('overdue', sign !== '');
      });
    }
    tick();
    setInterval(tick, 1000);
  }

  onReady(function () {
    tokenButton();
    document.querySelectorAll('progress[data-stream]').forEach(follow);
    countdowns();
    document.querySelectorAll('form[data-autosubmit]').forEach(function (f) { f.submit(); });
    document.querySelectorAll('[data-confirm]').forEach(function (b) {
      b.addEventListener('click', function (e) {
        if (!window.confirm(b.getAttribute('data-confirm'))) { e.preventDefault(); }
      });
    });
    document.querySelectorAll('.no-js').forEach(function (el) { el.hidden = true; });
  });
}());
