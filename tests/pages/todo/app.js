// A small TodoMVC-style app (model, view, controller) used as the overhead workload.
(function () {
  'use strict';
  var KEY = 'todos-shepherd';

  function Store() {
    this.items = [];
    this.nextId = 1;
  }
  Store.prototype.add = function (title) {
    var item = { id: this.nextId++, title: title, done: false };
    this.items.push(item);
    this.save();
    return item;
  };
  Store.prototype.find = function (id) {
    for (var i = 0; i < this.items.length; i++) if (this.items[i].id === id) return this.items[i];
    return null;
  };
  Store.prototype.toggle = function (id) {
    var it = this.find(id);
    if (it) it.done = !it.done;
    this.save();
  };
  Store.prototype.remove = function (id) {
    this.items = this.items.filter(function (it) { return it.id !== id; });
    this.save();
  };
  Store.prototype.remaining = function () {
    return this.items.filter(function (it) { return !it.done; }).length;
  };
  // Serialised like TodoMVC's localStorage store, kept in memory: Chromium's localStorage
  // commits add a fixed delay per write that would hide the controller's cost.
  Store.prototype.save = function () {
    saved[KEY] = JSON.stringify(this.items);
  };
  var saved = {};

  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  function View(root) {
    this.list = root.querySelector('#todo-list');
    this.input = root.querySelector('#new-todo');
    this.count = root.querySelector('#count');
  }
  View.prototype.render = function (store) {
    var html = '';
    store.items.forEach(function (it) {
      html += '<li data-id="' + it.id + '"' + (it.done ? ' class="completed"' : '') + '>' +
        '<input class="toggle" type="checkbox"' + (it.done ? ' checked' : '') + '>' +
        '<label>' + escapeHtml(it.title) + '</label><button class="destroy"></button></li>';
    });
    this.list.innerHTML = html;
    var n = store.remaining();
    this.count.textContent = n + (n === 1 ? ' item left' : ' items left');
  };

  function Controller(store, view) {
    var self = this;
    this.store = store;
    this.view = view;
    view.input.addEventListener('keydown', function (e) {
      if (e.key !== 'Enter') return;
      var title = view.input.value.trim();
      if (!title) return;
      store.add(title);
      view.input.value = '';
      self.refresh();
    });
    view.list.addEventListener('click', function (e) {
      var li = e.target.closest('li');
      if (!li) return;
      var id = parseInt(li.getAttribute('data-id'), 10);
      if (e.target.classList.contains('toggle')) store.toggle(id);
      else if (e.target.classList.contains('destroy')) store.remove(id);
      else return;
      self.refresh();
    });
    document.getElementById('clear-completed').addEventListener('click', function () {
      store.items.filter(function (it) { return it.done; }).forEach(function (it) { store.remove(it.id); });
      self.refresh();
    });
  }
  Controller.prototype.refresh = function () {
    this.view.render(this.store);
  };

  var app = new Controller(new Store(), new View(document));
  app.refresh();

  // The benchmark workload: add, complete and delete `n` items through DOM events, one event
  // per task (a MessageChannel hop between steps, as separate user events would be).
  window.todoWorkload = function (n) {
    var input = document.getElementById('new-todo');
    var list = document.getElementById('todo-list');
    var steps = [];
    var i;
    for (i = 0; i < n; i++) {
      steps.push((function (k) {
        return function () {
          input.value = 'item ' + k;
          input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
        };
      })(i));
    }
    for (i = 0; i < n; i++) {
      steps.push((function (k) {
        return function () { list.querySelectorAll('.toggle')[k].click(); };
      })(i));
    }
    for (i = 0; i < n; i++) {
      steps.push(function () { list.querySelector('.destroy').click(); });
    }
    return new Promise(function (resolve) {
      var ch = new MessageChannel();
      var at = 0;
      var t0 = performance.now();
      ch.port1.onmessage = function () {
        steps[at++]();
        if (at < steps.length) ch.port2.postMessage(0);
        else resolve({ ms: performance.now() - t0, left: list.children.length });
      };
      ch.port2.postMessage(0);
    });
  };
})();
