;;; arcology-oracle-test.el --- ERT tests for arcology-oracle -*- lexical-binding: t -*-

;;; Commentary:

;; Two kinds of tests.  Pure ones (re-levelling, formatting) need
;; nothing.  The others talk to the real daemon and a fake Ollama, which
;; tests/elisp/test_elisp.py starts before running:
;;
;;   emacs -Q --batch -L elisp -L elisp/test -l ert \
;;         -l elisp/test/arcology-oracle-test.el -f ert-run-tests-batch-and-exit
;;
;; The HTTP client's own tests, on recorded responses and without a
;; daemon, are in arcology-oracle-http-test.el.
;;
;; with these environment variables:
;;
;;   ARCOLOGY_ORACLE_TEST_URL     the daemon's base URL
;;   ARCOLOGY_ORACLE_TEST_TOKEN   its bearer token
;;   ARCOLOGY_ORACLE_TEST_ROAM    its roam directory (a copy of examples/roam)
;;   ARCOLOGY_ORACLE_TEST_OLLAMA  the fake Ollama's URL (to hold streams open)
;;   ARCOLOGY_ORACLE_TEST_TMP     a scratch directory
;;
;; ERT binds `debug-on-error', so an error signalled in any process
;; filter, sentinel or timer while a test waits fails that test.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'org-element)
(require 'arcology-oracle)
(require 'arcology-oracle-test-support)

(defvar org-roam-db-location)
(defvar org-roam-directory)
(defvar org-roam-mode-sections)
(declare-function org-roam-db-query "org-roam-db" (sql &rest args))
(declare-function org-roam-db--get-connection "org-roam-db" ())
(defvar emacsql-sqlite-executable)
(declare-function org-roam-node-from-id "org-roam-node" (id))
(declare-function org-roam-buffer-display-dedicated "org-roam-mode" (node))

;;;; Fixtures

(defun arcology-oracle-test--env (name)
  "Return the environment variable NAME, failing the test when unset."
  (or (getenv name)
      (ert-fail (format "%s is not set: run these tests through pytest tests/elisp/test_elisp.py" name))))

(defconst arcology-oracle-test--ids
  '((sourdough . "adda0990-28e8-487f-ae0a-eda5a8987581")
    (hydration . "36fb47dd-e96a-4b44-80ce-b246a771f11d")
    (affordances . "e0e5b7c4-c76d-4740-a2c7-c1492ae7427d")
    (journal-0301 . "82d51f3b-e80f-480b-be14-813a52374265")
    (journal-0302 . "eb0fd47f-b6a3-4e95-aac8-739e1f69cc7f"))
  "Node IDs of the example vault (see tests/org_samples.py).")

(defun arcology-oracle-test--id (name)
  "Return the node ID called NAME in the example vault."
  (alist-get name arcology-oracle-test--ids))

(defun arcology-oracle-test--free-url ()
  "Return the URL of a local port where nothing listens."
  (let* ((server (make-network-process :name "free-port" :server t
                                       :host "127.0.0.1" :service t))
         (port (process-contact server :service)))
    (delete-process server)
    (format "http://127.0.0.1:%d" port)))

(defvar arcology-oracle-test--buffers nil
  "Buffers to kill after the current test.")

(defmacro arcology-oracle-test--with-daemon (&rest body)
  "Run BODY against the test daemon, with clean caches and buffers."
  (declare (indent 0) (debug t))
  `(let ((arcology-oracle-url (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_URL"))
         (arcology-oracle-token (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TOKEN"))
         (arcology-oracle-roam-directory nil)
         (arcology-oracle--server-roam-dirs nil)
         (arcology-oracle--token-cache nil)
         (arcology-oracle--last-report nil)
         (arcology-oracle--section-cache (make-hash-table :test 'equal))
         (arcology-oracle-result-count 5)
         (auth-sources nil)
         (org-roam-directory (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
         (arcology-oracle-test--buffers nil))
     (unwind-protect
         (progn ,@body)
       (dolist (buffer arcology-oracle-test--buffers)
         (when (buffer-live-p buffer)
           (with-current-buffer buffer (set-buffer-modified-p nil))
           (kill-buffer buffer)))
       (dolist (name (list arcology-oracle-similar-buffer-name
                           arcology-oracle-answer-buffer-name
                           arcology-oracle-summary-buffer-name))
         (when (get-buffer name) (kill-buffer name)))
       (delete-other-windows))))

(defun arcology-oracle-test--visit (rel)
  "Visit REL in the daemon's roam directory in the selected window."
  (let ((buffer (find-file-noselect
                 (expand-file-name rel (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))))
    (push buffer arcology-oracle-test--buffers)
    (switch-to-buffer buffer)
    buffer))

(defun arcology-oracle-test--goto-heading (title)
  "Move point to the heading TITLE in the current buffer."
  (goto-char (point-min))
  (re-search-forward (format org-complex-heading-regexp-format (regexp-quote title)))
  (beginning-of-line))

(defun arcology-oracle-test--listed ()
  "Return the (TITLE . HEADING) pairs listed in the similar buffer."
  (with-current-buffer arcology-oracle-similar-buffer-name
    (let ((pos (point-min)) out)
      (while (setq pos (next-single-property-change pos 'arcology-oracle-result))
        (when-let ((result (get-text-property pos 'arcology-oracle-result)))
          (push (cons (alist-get 'title result) (alist-get 'heading result)) out)))
      (delete-dups (nreverse out)))))

(defun arcology-oracle-test--similar-header ()
  "Return the similar buffer's \"Similar to:\" header as one line.
A narrow window (batch Emacs's side window is 24 columns) puts its
title on more lines; they are joined with a space."
  (with-current-buffer arcology-oracle-similar-buffer-name
    (save-excursion
      (goto-char (point-min))
      (let (lines)
        (while (and (not (eobp)) (eq (get-text-property (point) 'face) 'bold))
          (push (buffer-substring-no-properties (point) (line-end-position)) lines)
          (forward-line 1))
        (string-join (nreverse lines) " ")))))

(defun arcology-oracle-test--entry-starts ()
  "Return the start positions of the entries of the similar buffer."
  (with-current-buffer arcology-oracle-similar-buffer-name
    (let ((pos (point-min)) out)
      (while (setq pos (next-single-property-change pos 'arcology-oracle-entry))
        (when (get-text-property pos 'arcology-oracle-entry) (push pos out)))
      (nreverse out))))

(defun arcology-oracle-test--fake-ollama (config)
  "Send CONFIG (an alist) to the fake Ollama's control API; wait for it."
  (let ((arcology-oracle-url (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_OLLAMA"))
        (arcology-oracle-token "unused")
        done)
    (arcology-oracle--json "POST" "/_fake/config" :json config
                           :callback (lambda (_) (setq done t))
                           :errback (lambda (m) (setq done m)))
    (arcology-oracle-test--wait (lambda () done) 10 "the fake Ollama")
    (unless (eq done t) (ert-fail (format "fake Ollama: %s" done)))))

;;;; Org helpers (pure)

(ert-deftest arcology-oracle-test-relevel ()
  "Returned headings are shifted to the level asked for."
  (should (equal (arcology-oracle--relevel "* Answer\nText\n** Sources\n- a" 3)
                 "*** Answer\nText\n**** Sources\n- a"))
  (should (equal (arcology-oracle--relevel "*** Answer\nbold *not a heading*" 2)
                 "** Answer\nbold *not a heading*"))
  (should (equal (arcology-oracle--relevel "just text" 2) "** Answer\njust text")))

(ert-deftest arcology-oracle-test-source-links ()
  "Sources become id: links, with the heading when it is not the title."
  (should (equal (arcology-oracle--format-sources
                  '(((n . 1) (node_id . "abc") (title . "Bread [Hydration]")
                     (heading . "Autolyse") (file . "b.org") (line . 9))
                    ((n . 2) (node_id . "def") (title . "Rust") (heading . "Rust"))))
                 (concat "- [1] [[id:abc][Bread Hydration › Autolyse]]\n"
                         "- [2] [[id:def][Rust]]\n")))
  ;; A window of dialogue names its speakers and date.
  (should (equal (arcology-oracle--format-sources
                  '(((n . 1) (node_id . "c1") (title . "Chats with Ana") (heading . "Chats with Ana")
                     (speakers "Ana" "Me") (date . "2024-03-02"))))
                 "- [1] [[id:c1][Chats with Ana]] (Ana, Me, 2024-03-02)\n"))
  (should-not (arcology-oracle--format-sources nil)))

(ert-deftest arcology-oracle-test-heading-context ()
  "The heading context has the line, outline path and enclosing node."
  (with-temp-buffer
    (insert ":PROPERTIES:\n:ID: file-id\n:END:\n#+title: File\n\nIntro.\n"
            "* One\n:PROPERTIES:\n:ID: one-id\n:END:\n** Two\nBody of two.\n* Three\n")
    (org-mode)
    (goto-char (point-min))
    (search-forward "Intro")
    (let ((ctx (arcology-oracle--heading-context)))
      (should (equal (plist-get ctx :title) "File"))
      (should (= (plist-get ctx :line) 1))
      (should (equal (plist-get ctx :node-id) "file-id")))
    (search-forward "Body of")
    (let ((ctx (arcology-oracle--heading-context)))
      (should (equal (plist-get ctx :title) "Two"))
      (should (equal (plist-get ctx :olp) '("One")))
      (should (= (plist-get ctx :line) 11))
      (should (equal (plist-get ctx :text) "** Two\nBody of two.\n"))
      (should (equal (plist-get ctx :node-id) "one-id")))))

(ert-deftest arcology-oracle-test-heading-context-first-line-heading ()
  "In a file that starts with a heading, the heading's body is in that heading."
  (with-temp-buffer
    (insert "* Rye starter\n:PROPERTIES:\n:ID: rye-id\n:END:\nFeed it rye flour.\n* Wheat\nOther.\n")
    (org-mode)
    (goto-char (point-min))
    (search-forward "rye flour")
    (let ((ctx (arcology-oracle--heading-context)))
      (should (equal (plist-get ctx :title) "Rye starter"))
      (should (equal (plist-get ctx :olp) nil))
      (should (= (plist-get ctx :start) (point-min)))
      (should (equal (plist-get ctx :own-id) "rye-id"))
      (should (string-prefix-p "* Rye starter\n" (plist-get ctx :text))))))

;;;; Talking to the daemon

(ert-deftest arcology-oracle-test-json-request-with-token ()
  "JSON requests carry the token; without it the daemon's 401 becomes a message."
  (arcology-oracle-test--with-daemon
    (let (answer)
      (arcology-oracle--json "GET" "/status" :callback (lambda (a) (setq answer a))
                             :errback (lambda (m) (setq answer m)))
      (arcology-oracle-test--wait (lambda () answer))
      (should (equal (alist-get 'roam_dir answer)
                     (directory-file-name (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))))
      (should (> (alist-get 'headings answer) 10)))
    (let ((arcology-oracle-token "wrong") answer)
      (arcology-oracle--json "GET" "/status" :callback (lambda (a) (setq answer a))
                             :errback (lambda (m) (setq answer m)))
      (arcology-oracle-test--wait (lambda () answer))
      (should (stringp answer))
      (should (string-match-p "(HTTP 401)" answer)))))

(ert-deftest arcology-oracle-test-token-from-auth-source ()
  "Without `arcology-oracle-token' the token comes from auth-source."
  (arcology-oracle-test--with-daemon
    (let* ((url (url-generic-parse-url arcology-oracle-url))
           (authinfo (make-temp-file "authinfo"))
           (auth-sources (list authinfo))
           (arcology-oracle-token nil)
           answer)
      (unwind-protect
          (progn
            (with-temp-file authinfo
              (insert (format "machine %s port %d password %s\n"
                              (url-host url) (url-port url)
                              (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TOKEN"))))
            (auth-source-forget-all-cached)
            (arcology-oracle--json "GET" "/status" :callback (lambda (a) (setq answer a))
                                   :errback (lambda (m) (setq answer m)))
            (arcology-oracle-test--wait (lambda () answer))
            (should (consp answer))
            (should (equal (arcology-oracle-auth-token)
                           (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TOKEN"))))
        (delete-file authinfo)
        (auth-source-forget-all-cached)))))

;;;; Similar notes

(ert-deftest arcology-oracle-test-similar-lists-related-node ()
  "The side buffer lists Bread Hydration for the Sourdough Baking file node."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "sourdough-baking.org")
    (goto-char (point-min))
    (arcology-oracle-similar-show)
    (should (get-buffer-window arcology-oracle-similar-buffer-name))
    (arcology-oracle-test--wait (lambda () (assoc "Bread Hydration" (arcology-oracle-test--listed)))
                                20 "Bread Hydration in the side buffer")
    (with-current-buffer arcology-oracle-similar-buffer-name
      (should (equal "Similar to: Sourdough Baking" (arcology-oracle-test--similar-header)))
      ;; Score, title, outline path (the title first) and snippet of each entry.
      (goto-char (point-min))
      ;; Sourdough Baking links to Bread Hydration already, and Bread Hydration back
      ;; (the daemon says so, with no org-roam database here): it is marked so.
      ;; (On its own line in a window too narrow for both: batch Emacs's is 24 columns.)
      (re-search-forward "^[0-9]\\.[0-9][0-9]  Bread Hydration\\(?: \\|\n  \\)linked both ways$")
      (forward-line 1)
      (should (looking-at-p "  Bread Hydration$"))
      (forward-line 1)
      (should (looking-at-p "  Hydration is the w"))  ; cut to the window's width
      ;; Never the node itself.
      (should-not (assoc "Sourdough Baking" (arcology-oracle-test--listed)))
      ;; n and p move from note to note.
      (goto-char (point-min))
      (arcology-oracle-similar-next)
      (let ((first (get-text-property (point) 'arcology-oracle-result)))
        (should (equal (alist-get 'title first) (car (car (arcology-oracle-test--listed)))))
        (arcology-oracle-similar-next)
        (should (equal (get-text-property (point) 'arcology-oracle-result)
                       (nth 1 (mapcar (lambda (pos) (get-text-property pos 'arcology-oracle-result))
                                      (arcology-oracle-test--entry-starts)))))
        (arcology-oracle-similar-previous)
        (should (eq (get-text-property (point) 'arcology-oracle-result) first))))))

(ert-deftest arcology-oracle-test-similar-follows-heading-and-visits ()
  "Moving to a heading schedules a refresh; RET visits the entry."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "design-of-everyday-things.org")
    (arcology-oracle-similar-mode 1)
    (display-buffer (arcology-oracle--similar-buffer) arcology-oracle-similar-display-action)
    (arcology-oracle-test--goto-heading "Affordances and signifiers")
    (arcology-oracle--similar-post-command-h)
    (should (timerp arcology-oracle--similar-timer))
    ;; Idle timers do not fire in batch: run the scheduled refresh.
    (let ((timer arcology-oracle--similar-timer))
      (cancel-timer timer)
      (apply (timer--function timer) (timer--args timer)))
    (arcology-oracle-test--wait
     (lambda () (member '("2024-03-02" . "Read a chapter of Norman") (arcology-oracle-test--listed)))
     20 "the journal entry about Norman")
    ;; Point did not leave the heading: no new refresh is scheduled.
    (setq arcology-oracle--similar-timer nil)
    (forward-line 1)
    (arcology-oracle--similar-post-command-h)
    (should-not arcology-oracle--similar-timer)
    ;; The first unsaved edit asks again (by the heading's text), the next ones do not;
    ;; undoing them all asks again (by the saved note).
    (let ((saved (buffer-string)))
      (insert "x")
      (arcology-oracle--similar-post-command-h)
      (should (timerp arcology-oracle--similar-timer))
      (cancel-timer arcology-oracle--similar-timer)
      (setq arcology-oracle--similar-timer nil)
      (insert "y")
      (arcology-oracle--similar-post-command-h)
      (should-not arcology-oracle--similar-timer)
      (delete-char -2)
      (set-buffer-modified-p nil)
      (should (equal (buffer-string) saved))
      (arcology-oracle--similar-post-command-h)
      (should (timerp arcology-oracle--similar-timer))
      (cancel-timer arcology-oracle--similar-timer)
      (setq arcology-oracle--similar-timer nil))
    ;; Visit the journal entry from the side window.
    (select-window (get-buffer-window arcology-oracle-similar-buffer-name))
    (goto-char (point-min))
    (search-forward "2024-03-02")
    (call-interactively (key-binding (kbd "RET")))
    (push (current-buffer) arcology-oracle-test--buffers)
    (should (equal (file-name-nondirectory buffer-file-name) "2024-03-02.org"))
    (should (looking-at-p "\\* Read a chapter of Norman"))
    (should-not (window-parameter nil 'window-side))))

(ert-deftest arcology-oracle-test-similar-unsaved-buffer-uses-text ()
  "An edited buffer is matched by its text, leaving out its own node."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "rust-ownership.org")
    (arcology-oracle-test--goto-heading "Borrowing and references")
    (end-of-line)
    (insert " and lifetimes")
    (should (buffer-modified-p))
    (pcase-let ((`(,method ,_ ,_ ,json) (arcology-oracle--similar-request-args
                                         (arcology-oracle--heading-context)
                                         (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))))
      (should (equal method "POST"))
      ;; The node the heading is in, here the file's: the daemon leaves its saved self out.
      (should (stringp (alist-get 'node json)))
      (should (equal (alist-get 'node json) (org-entry-get (point-min) "ID")))
      ;; And where it is: the daemon puts the text in the saved outline.
      (should (equal (alist-get 'file json) "rust-ownership.org"))
      (should (equal (alist-get 'line json) (line-number-at-pos (org-entry-beginning-position) t))))
    (arcology-oracle-similar-show)
    (arcology-oracle-test--wait (lambda () (assoc "Borrow Checker" (arcology-oracle-test--listed))))
    (should-not (assoc "Rust Ownership" (arcology-oracle-test--listed)))))

(ert-deftest arcology-oracle-test-similar-in-narrowed-buffer ()
  "The similar notes of a heading narrowed to are shown; the narrowing stays."
  (arcology-oracle-test--with-daemon
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))
    (arcology-oracle-test--visit "sourdough-baking.org")
    (arcology-oracle-test--goto-heading "Shaping and scoring")
    (org-narrow-to-subtree)
    (let ((bounds (cons (point-min) (point-max))))
      (should (> (car bounds) 1))
      (arcology-oracle-similar-show)
      (arcology-oracle-test--wait (lambda () (arcology-oracle-test--listed)) 20 "similar notes")
      (with-current-buffer arcology-oracle-similar-buffer-name
        (should (equal "Similar to: Shaping and scoring" (arcology-oracle-test--similar-header))))
      ;; Asked again, with the list already filled.
      (arcology-oracle-similar-refresh)
      (arcology-oracle-test--settled)
      (should (equal (cons (point-min) (point-max)) bounds)))))

(ert-deftest arcology-oracle-test-similar-newer-request-wins ()
  "A stale answer never replaces a newer one."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "gardening-tomatoes.org")
    (display-buffer (arcology-oracle--similar-buffer) arcology-oracle-similar-display-action)
    (arcology-oracle-similar-mode 1)
    (goto-char (point-min))
    (arcology-oracle-similar-refresh)
    (let ((first-generation arcology-oracle--similar-generation))
      (arcology-oracle-test--goto-heading "Blight and diseases")
      (arcology-oracle-similar-refresh)
      (should (> arcology-oracle--similar-generation first-generation)))
    ;; Once no connection is open, every answer has arrived (or been
    ;; cancelled), the first request's too.
    (arcology-oracle-test--wait (lambda () (arcology-oracle-test--listed)))
    (arcology-oracle-test--settled)
    (with-current-buffer arcology-oracle-similar-buffer-name
      (should (equal "Similar to: Blight and diseases" (arcology-oracle-test--similar-header))))
    ;; An answer that arrives after a newer request was made is dropped:
    ;; ask, count a newer request as made, and let the answer arrive in full.
    (let (before stale)
      (arcology-oracle-test--goto-heading "Seed starting")
      (arcology-oracle-similar-refresh)
      (setq before (with-current-buffer arcology-oracle-similar-buffer-name (buffer-string)))
      ;; Until its answer comes, the list shown says it is another heading's.
      ;; (Filled to the window: a narrow one shows it on two lines.)
      (should (string-match-p "\\`Similar to: Blight and[ \n]diseases\nAsking about Seed[ \n]starting…" before))
      (setq stale arcology-oracle--similar-request)
      (should stale)
      (cl-incf arcology-oracle--similar-generation)
      ;; The callback runs in the same turn that marks the request finished.
      (arcology-oracle-test--wait (lambda () (arcology-oracle--http-finished stale))
                                  20 "the stale answer")
      (should (eql (arcology-oracle--http-status stale) 200))
      (with-current-buffer arcology-oracle-similar-buffer-name
        (should (equal (buffer-string) before))))))

;; `POST /_fake/release': let the requests hanging in the fake Ollama go on.
(defun arcology-oracle-test--release-ollama ()
  "Stop the fake Ollama hanging and let its hanging requests go on."
  (arcology-oracle-test--fake-ollama '((hang . :json-false)))
  (let ((arcology-oracle-url (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_OLLAMA"))
        (arcology-oracle-token "unused")
        done)
    (arcology-oracle--json "POST" "/_fake/release"
                           :callback (lambda (_) (setq done t)) :errback (lambda (m) (setq done m)))
    (arcology-oracle-test--wait (lambda () done) 10 "the fake Ollama's release")))

(ert-deftest arcology-oracle-test-similar-edited-heading-says-asking ()
  "Asked again about the same heading after an unsaved edit, the list says it is asked.
The daemon embeds the edited text (the fake Ollama holds it): until it
answers, the old list is shown under \"Asking about ...\".  Asked
again with no edit in between, it says nothing (no line comes and goes)."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "gardening-tomatoes.org")
    (display-buffer (arcology-oracle--similar-buffer) arcology-oracle-similar-display-action)
    (arcology-oracle-similar-mode 1)
    (arcology-oracle-test--goto-heading "Blight and diseases")
    (arcology-oracle-similar-refresh)
    (arcology-oracle-test--wait (lambda () (arcology-oracle-test--listed)) 20 "similar notes")
    (arcology-oracle-test--settled)
    (let ((listed (arcology-oracle-test--listed)))
      (arcology-oracle-similar-refresh)  ; no edit: the same question
      (with-current-buffer arcology-oracle-similar-buffer-name
        (should-not (string-match-p "Asking about" (buffer-string))))
      (arcology-oracle-test--settled)
      (arcology-oracle-test--fake-ollama '((hang . t)))
      (unwind-protect
          (progn
            (end-of-line)
            (insert "\nCopper spray every week in wet weather.")
            (should (buffer-modified-p))
            (arcology-oracle-similar-refresh)  ; what the idle timer calls after the edit
            (should arcology-oracle--similar-request)
            (with-current-buffer arcology-oracle-similar-buffer-name
              (should (string-match-p "\\`Similar to: Blight and[ \n]diseases\nAsking about Blight[ \n]and[ \n]diseases…"
                                      (buffer-string))))
            (should (equal (arcology-oracle-test--listed) listed)))
        (arcology-oracle-test--release-ollama))
      (arcology-oracle-test--settled 40)
      (with-current-buffer arcology-oracle-similar-buffer-name
        (should-not (string-match-p "Asking about" (buffer-string)))))))

;; org-roam-db-sync closes the directory's connection and opens it
;; again at once, but closing only ends sqlite's input: while sqlite had
;; not exited yet (a busy machine), org-roam took the dying connection
;; for live, sent the sync's queries into the void and failed with
;; "Selecting deleted buffer" once sqlite was gone.  The lists open that
;; connection (a note's backlinks), so each sync here waits it out.
(ert-deftest arcology-oracle-test-roam-db-sync-after-an-open-connection ()
  "The tests' org-roam sync works when sqlite is slow to end the connection it closes."
  (require 'org-roam)
  (arcology-oracle-test--with-daemon
    (let* ((tmp (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP"))
           (org-roam-db-location (expand-file-name (format "org-roam-reopen-%d.db" (emacs-pid)) tmp))
           (slow (expand-file-name "slow-sqlite" tmp))
           (inhibit-message t))
      ;; A sqlite that lingers after its input ended, as one not yet
      ;; scheduled on a busy machine does.
      (with-temp-file slow
        (insert (format "#!/bin/sh\n%s \"$@\"\nsleep 1\n"
                        (shell-quote-argument emacsql-sqlite-executable))))
      (set-file-modes slow #o700)
      (unwind-protect
          (let ((old (let ((emacsql-sqlite-executable slow))
                       (org-roam-db-query [:select id :from nodes]) ; as a list's backlinks open it
                       (org-roam-db--get-connection))))
            (arcology-oracle-test--roam-db-sync)
            (should-not (eq (org-roam-db--get-connection) old))
            (should (org-roam-node-from-id (arcology-oracle-test--id 'sourdough))))
        (arcology-oracle-test--roam-db-close)
        (when (file-exists-p org-roam-db-location) (delete-file org-roam-db-location))))))

(ert-deftest arcology-oracle-test-org-roam-section ()
  "The org-roam buffer shows the similar notes beside backlinks; RET visits by ID."
  (require 'org-roam)
  (arcology-oracle-test--with-daemon
    (let* ((org-roam-db-location (expand-file-name
                                  (format "org-roam-%d.db" (emacs-pid))
                                  (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))
           (org-roam-mode-sections (list #'org-roam-backlinks-section
                                         #'arcology-oracle-similar-section))
           (inhibit-message t))
      (unwind-protect
          (progn
            (arcology-oracle-test--roam-db-sync)
            (let* ((node (org-roam-node-from-id (arcology-oracle-test--id 'sourdough)))
                   (window (org-roam-buffer-display-dedicated node))
                   (buffer (window-buffer window)))
              (push buffer arcology-oracle-test--buffers)
              (with-current-buffer buffer
                (should (string-match-p "Looking for similar notes" (buffer-string)))
                (arcology-oracle-test--wait
                 (lambda () (string-match-p "^[0-9]\\.[0-9][0-9] Bread Hydration linked both ways$"
                                            (buffer-string)))
                 20 "the similar notes section")
                (should (string-match-p "^Backlinks" (buffer-string)))
                (should (string-match-p "^Similar notes" (buffer-string)))
                ;; The journal links to Sourdough Baking: it is under Backlinks too.
                (should (string-match-p "^[0-9.]+ 2024-03-01 links here\\(?: weak\\)? (Baked a sourdough loaf)$"
                                        (buffer-string)))
                (select-window window)
                (goto-char (point-min))
                (re-search-forward "^[0-9.]+ Bread Hydration linked both ways\\(?: weak\\)?$")
                (goto-char (match-beginning 0))
                (call-interactively (key-binding (kbd "RET")))
                (push (current-buffer) arcology-oracle-test--buffers)
                (should (equal (file-name-nondirectory buffer-file-name) "bread-hydration.org")))))
        (arcology-oracle-test--roam-db-close)
        (when (file-exists-p org-roam-db-location) (delete-file org-roam-db-location))))))

;; A failure cached for the section was shown again by g for 10 seconds
;; after the daemon came back ("no answer from the daemon within 15 seconds").
(ert-deftest arcology-oracle-test-org-roam-section-failure-not-kept ()
  "g in the org-roam buffer asks again after a failure: it is not shown again."
  (require 'org-roam)
  (arcology-oracle-test--with-daemon
    (let* ((org-roam-db-location (expand-file-name
                                  (format "org-roam-failure-%d.db" (emacs-pid))
                                  (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))
           (org-roam-mode-sections (list #'arcology-oracle-similar-section))
           (daemon arcology-oracle-url)
           (inhibit-message t))
      (unwind-protect
          (progn
            (arcology-oracle-test--roam-db-sync)
            (let* ((node (org-roam-node-from-id (arcology-oracle-test--id 'sourdough)))
                   (arcology-oracle-url (arcology-oracle-test--free-url))
                   (window (org-roam-buffer-display-dedicated node))
                   (buffer (window-buffer window)))
              (push buffer arcology-oracle-test--buffers)
              (with-current-buffer buffer
                (arcology-oracle-test--wait
                 (lambda () (string-match-p "daemon not reachable" (buffer-string)))
                 20 "the failure in the section")
                ;; The daemon is back: g shows no failure, then the notes.
                (setq arcology-oracle-url daemon)
                (org-roam-buffer-refresh)
                (should-not (string-match-p "not reachable" (buffer-string)))
                (arcology-oracle-test--wait
                 (lambda () (string-match-p "^[0-9]\\.[0-9][0-9] Bread Hydration" (buffer-string)))
                 20 "the similar notes after g"))))
        (arcology-oracle-test--roam-db-close)
        (when (file-exists-p org-roam-db-location) (delete-file org-roam-db-location))))))

;;;; Search

(ert-deftest arcology-oracle-test-search-visits-choice ()
  "Search offers the results through `completing-read' and visits the choice."
  (arcology-oracle-test--with-daemon
    (let (prompted)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt table &rest _)
                   (setq prompted prompt)
                   (let ((candidates (all-completions "" table)))
                     (should (equal (cdr (assq 'category (cdr (funcall table "" nil 'metadata))))
                                    'arcology-oracle-note))
                     (car candidates)))))
        (arcology-oracle-search "sqlite covering index")
        ;; The choice is visited from a timer, in the selected window.
        (arcology-oracle-test--wait (lambda () (string-suffix-p
                                                "sqlite-indexing.org"
                                                (or (buffer-file-name (window-buffer)) "")))
                                    20 "the search result to be visited")
        (set-buffer (window-buffer))
        (goto-char (window-point))
        (push (current-buffer) arcology-oracle-test--buffers)
        ;; The query whole where the frame has room for it, else cut to fit.
        (should (string-match-p "\\`Notes for sqlite covering in\\(?:dex\\|d…\\) ([0-9]+ found, RET visits the best, TAB lists them): \\'"
                                prompted))
        (should (< (string-width prompted) (frame-width)))
        (should (looking-at-p "\\* Covering indexes"))))))

;;;; A daemon that is down

(ert-deftest arcology-oracle-test-daemon-down-messages-without-errors ()
  "Every command reports a daemon that is down in the echo area, without error.
All in the same words, which say how to start it (as C-c o a did alone)."
  (arcology-oracle-test--with-daemon
    (let ((arcology-oracle-url (arcology-oracle-test--free-url))
          (arcology-oracle-roam-directory (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
          (conversation (generate-new-buffer "conversation")))
      (push conversation arcology-oracle-test--buffers)
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-test--visit "sourdough-baking.org")
        (arcology-oracle-similar-show)
        (arcology-oracle-search "anything")
        (arcology-oracle-ask "What is a levain?")
        (arcology-oracle-summarize)
        (arcology-oracle-suggest-links)
        (arcology-oracle-link-rejections)
        (with-current-buffer conversation
          (org-mode)
          (insert "* Chat :conversation:\n** Me\nHello?\n")
          (arcology-oracle-converse))
        (let ((tags-done nil))
          (arcology-oracle--json "GET" "/api/tags" :callback #'ignore
                                 :errback (lambda (_) (setq tags-done t)))
          (arcology-oracle-test--wait (lambda () tags-done)))
        (arcology-oracle-test--wait
         (lambda () (>= (cl-count-if (lambda (m) (string-match-p "not reachable" m)) messages) 7))
         20 "seven messages")
        ;; Every request has failed once no connection is open.
        (arcology-oracle-test--settled)
        (let ((reports (cl-remove-if-not (lambda (m) (string-prefix-p "arcology-oracle: daemon" m))
                                         messages)))
          (should (>= (length reports) 7))
          (should (equal (delete-dups (copy-sequence reports))
                         (list (format "arcology-oracle: daemon not reachable at %s (connection refused): %s"
                                       arcology-oracle-url "start it (arcology-oracle serve)")))))
        (should-not (cl-find-if (lambda (m) (string-match-p "error in process\\|error in timer" m))
                                messages)))
      (with-current-buffer arcology-oracle-similar-buffer-name
        (should (string-match-p "not reachable" (buffer-string))))
      (with-current-buffer conversation
        (should (equal (buffer-string) "* Chat :conversation:\n** Me\nHello?\n")))
      ;; Automatic refreshes repeat the same complaint only once a minute.
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle--report "daemon not reachable" t)
        (arcology-oracle--report "daemon not reachable" t)
        (should (= (length messages) 1))))))

;;;; Ask, summarize, converse

(ert-deftest arcology-oracle-test-ask-streams-into-buffer ()
  "The answer streams into the answers buffer, then its sources as id: links."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "sourdough-baking.org")
    (arcology-oracle-test--fake-ollama '((stream_gate . t)))
    (unwind-protect
        (let ((buffer (get-buffer-create arcology-oracle-answer-buffer-name)))
          (arcology-oracle-ask "How do I feed the starter?")
          (with-current-buffer buffer
            (should (derived-mode-p 'org-mode))
            (should (string-prefix-p "* How do I feed the starter?\n" (buffer-string)))
            ;; The first piece arrives while the model is still held.
            (arcology-oracle-test--wait
             (lambda () (> (buffer-size) (length "* How do I feed the starter?\n")))
             20 "the first token")
            (should-not (string-match-p "Sources" (buffer-string))))
          (arcology-oracle-test--fake-ollama '((stream_gate . :json-false)))
          (with-current-buffer buffer
            (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string)))
                                        20 "the sources")
            (should (string-match-p "^- \\[1\\] \\[\\[id:[-0-9a-f]+\\]\\[[^]]+\\]\\]$" (buffer-string)))
            (should-not (string-match-p "Failed" (buffer-string)))))
      (arcology-oracle-test--fake-ollama '((stream_gate . :json-false))))))

(ert-deftest arcology-oracle-test-ask-region ()
  "A question about the region sends the region only."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "gardening-tomatoes.org")
    (arcology-oracle-test--goto-heading "Blight and diseases")
    (let ((payload nil)
          (beg (point))
          (end (save-excursion (org-end-of-subtree t) (point))))
      (cl-letf* ((orig (symbol-function 'arcology-oracle--stream-answer))
                 ((symbol-function 'arcology-oracle--stream-answer)
                  (lambda (marker path body)
                    (setq payload body)
                    (funcall orig marker path body))))
        (arcology-oracle-ask-region "What about blight?" beg end)
        (arcology-oracle-test--wait (lambda () payload)))
      (should (equal (alist-get 'buffer payload) (buffer-substring-no-properties beg end)))
      (should (equal (alist-get 'file payload) "gardening-tomatoes.org"))
      (with-current-buffer arcology-oracle-answer-buffer-name
        (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string))))))))

(ert-deftest arcology-oracle-test-summarize ()
  "The summary of the node at point streams into the summary buffer."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "bread-hydration.org")
    (arcology-oracle-test--goto-heading "Autolyse")
    (arcology-oracle-summarize)
    (arcology-oracle-test--wait (lambda () (get-buffer arcology-oracle-summary-buffer-name)))
    (with-current-buffer arcology-oracle-summary-buffer-name
      (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string)))
                                  30 "the summary")
      ;; Autolyse has no ID: its node, the file's, is summarized, and named.
      (should (string-prefix-p "* Summary of Bread Hydration\n" (buffer-string)))
      (should (string-match-p (regexp-quote (format "[[id:%s][Bread Hydration]]"
                                                    (arcology-oracle-test--id 'hydration)))
                              (buffer-string)))
      (should-not (string-match-p "Failed" (buffer-string))))))

(defun arcology-oracle-test--conversation (text)
  "Return a new org buffer holding TEXT, with undo on, point at the last \"Me\" body."
  (let ((buffer (generate-new-buffer "conversation.org")))
    (push buffer arcology-oracle-test--buffers)
    (with-current-buffer buffer
      (org-mode)
      (insert text)
      (buffer-enable-undo)
      (setq buffer-undo-list nil)
      (goto-char (point-max))
      (re-search-backward "^\\*+ Me")
      (forward-line 1))
    (switch-to-buffer buffer)
    buffer))

(ert-deftest arcology-oracle-test-converse-inserts-last-child ()
  "The answer becomes the conversation's last child, one undo away; discard deletes it."
  (arcology-oracle-test--with-daemon
    (let* ((text (concat "#+title: Kitchen notes\n\n* Other heading\nText.\n"
                         "* Baking :project:\n** Sourdough chat :conversation:\n"
                         "*** Me\nHow often should I feed my sourdough starter?\n"
                         "**** Aside inside my turn\nNot a new turn.\n"
                         "* Later heading\nStays last.\n"))
           (buffer (arcology-oracle-test--conversation text)))
      (search-forward "Not a new")
      (arcology-oracle-converse)
      (with-current-buffer buffer
        (arcology-oracle-test--wait (lambda () (org-entry-get nil arcology-oracle-answer-property))
                                    30 "the answer heading")
        (should (org-at-heading-p))
        (should (= (org-outline-level) 3))
        (should (eq (window-buffer) buffer))
        (should (= (window-point) (point)))
        ;; The last child of the conversation: its parent is the tagged heading
        ;; and the next heading is the following top-level one.
        (save-excursion
          (org-up-heading-safe)
          (should (equal (org-get-heading t t t t) "Sourdough chat")))
        (save-excursion
          (should-not (org-get-next-sibling)))
        (should (equal (org-entry-get nil "ROLE") "oracle"))
        ;; Sources are IDs (with where the heading cited is) in a property and a
        ;; readable list, not links: a cited note gains no org-roam backlink.
        (should (string-match-p "\\`[-0-9a-f]+::[^ ]+::[0-9]+\\( [-0-9a-f]+::[^ ]+::[0-9]+\\)*\\'"
                                (org-entry-get nil "SOURCES")))
        (let ((answer (buffer-substring-no-properties
                       (point) (save-excursion (org-end-of-subtree t t) (point)))))
          (should (string-match-p "^Sources:\n- \\[1\\] " answer))
          (should-not (string-match-p "\\[\\[id:" answer))
          (should-not (string-match-p "^\\* " answer)))
        (should (string-suffix-p "* Later heading\nStays last.\n" (buffer-string)))
        ;; Well-formed: the parser sees a headline at level 3 under the conversation.
        (let ((element (org-element-at-point)))
          (should (eq (org-element-type element) 'headline))
          (should (= (org-element-property :level element) 3)))
        ;; One undo removes the whole answer.
        (let ((last-command nil)) (undo))
        (should (equal (buffer-string) text))
        ;; Ask again, then discard from inside the answer's body.
        (goto-char (point-min))
        (search-forward "How often")
        (arcology-oracle-converse)
        (arcology-oracle-test--wait (lambda () (org-entry-get nil arcology-oracle-answer-property))
                                    30 "the second answer")
        (forward-line 3)
        (arcology-oracle-discard)
        (should (equal (buffer-string) text))))))

(ert-deftest arcology-oracle-test-converse-top-level ()
  "Without a conversation tag, the top-level heading around point is the conversation."
  (arcology-oracle-test--with-daemon
    (let ((buffer (arcology-oracle-test--conversation
                   "* Tomato questions\n** Me\nWhat causes blight on tomatoes?\n")))
      (arcology-oracle-converse)
      (with-current-buffer buffer
        (arcology-oracle-test--wait (lambda () (org-entry-get nil arcology-oracle-answer-property))
                                    30 "the answer heading")
        (should (= (org-outline-level) 2))
        (should (= (count-matches "^\\* " (point-min) (point-max)) 1))))))

(defun arcology-oracle-test--answered-p (buffer)
  "Return non-nil when BUFFER holds an answer heading inserted by converse."
  (with-current-buffer buffer
    (save-excursion
      (goto-char (point-min))
      (re-search-forward (format "^[ \t]*:%s:" arcology-oracle-answer-property) nil t))))

(ert-deftest arcology-oracle-test-converse-leaves-point-elsewhere ()
  "An answer arriving while the reader is elsewhere in the buffer does not move point.
The mark is set at the answer and the message says where it went;
a window still in the conversation moves to the answer."
  (arcology-oracle-test--with-daemon
    (let* ((text (concat "* Other heading\nText.\n"
                         "* Sourdough chat :conversation:\n"
                         "** Me\nHow often should I feed my sourdough starter?\n"
                         "* Later heading\nStays last.\n"))
           (buffer (arcology-oracle-test--conversation text))
           (other (split-window)))
      ;; A second window on the conversation, where the first was.
      (set-window-point other (point))
      (arcology-oracle-converse)
      ;; The reader goes elsewhere and types while the model thinks.
      (goto-char (point-min))
      (search-forward "Text.")
      (insert " typed")
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-test--wait (lambda () (arcology-oracle-test--answered-p buffer)) 30 "the answer")
        (with-current-buffer buffer
          (should (looking-back "^Text\\. typed" (line-beginning-position)))
          (should (= (window-point (selected-window)) (point)))
          ;; The mark is at the answer, a heading under the conversation.
          (save-excursion
            (goto-char (mark t))
            (should (org-at-heading-p))
            (should (org-entry-get nil arcology-oracle-answer-property))
            (should (= (org-outline-level) 2))
            ;; The window left in the conversation shows the answer.
            (should (= (window-point other) (point))))
          (should (string-suffix-p "* Later heading\nStays last.\n" (buffer-string))))
        (should (cl-find-if (lambda (m) (string-match-p "answered in conversation\\.org.*, line 6, under Sourdough chat" m))
                            messages))))))

;; A marker alone stayed where text was deleted or inserted: each answer below went
;; under another heading ("Chat B", "Shopping list") than the one it answers.
(defun arcology-oracle-test--answer-parent (buffer)
  "Return (LEVEL PARENT-TITLE) of the answer heading in BUFFER, or nil."
  (with-current-buffer buffer
    (save-excursion
      (goto-char (point-min))
      (when (re-search-forward (format "^[ \t]*:%s:" arcology-oracle-answer-property) nil t)
        (org-back-to-heading t)
        (list (org-outline-level) (progn (org-up-heading-safe) (org-get-heading t t t t)))))))

(ert-deftest arcology-oracle-test-converse-follows-its-heading ()
  "Edits while the model thinks never put the answer under another heading.
A conversation moved (killed and yanked) gets it where it went; one
below a heading typed at its start gets it too; one deleted gets
nothing (the answer goes to the kill ring, the message says why)."
  (arcology-oracle-test--with-daemon
    (let* ((two (concat "* Chat A\n** Me\nHow often should I feed my sourdough starter?\n"
                        "* Chat B\n** Me\nWhat causes blight on tomatoes?\n"))
           (buffer (arcology-oracle-test--conversation two)))
      ;; Asked twice before the answer: the second says it is on its way, and
      ;; the conversation gets one answer.
      (goto-char (point-min))
      (search-forward "feed my")
      (arcology-oracle-converse)
      (should (string-match-p "\\`An answer to \"Chat A\" is on its way"
                              (cadr (should-error (arcology-oracle-converse) :type 'user-error))))
      (arcology-oracle-test--wait (lambda () (arcology-oracle-test--answered-p buffer)) 30 "the answer")
      (should (= 1 (count-matches (format "^[ \t]*:%s:" arcology-oracle-answer-property) (point-min) (point-max))))
      (should (equal (arcology-oracle-test--answer-parent buffer) '(2 "Chat A")))
      (should-not arcology-oracle--awaited-tags)
      (erase-buffer)
      (insert two)
      ;; Moved below Chat B.
      (goto-char (point-min))
      (search-forward "feed my")
      (arcology-oracle-converse)
      (goto-char (point-min))
      (org-move-subtree-down)
      (arcology-oracle-test--wait (lambda () (arcology-oracle-test--answered-p buffer)) 30 "the answer")
      (should (equal (arcology-oracle-test--answer-parent buffer) '(2 "Chat A")))
      (should (string-prefix-p "* Chat B\n** Me\nWhat causes blight on tomatoes?\n* Chat A\n" (buffer-string)))
      ;; A heading typed at the conversation's start.
      (erase-buffer)
      (insert "* Chat A\n** Me\nHow often should I feed my sourdough starter?\n")
      (arcology-oracle-converse)
      (goto-char (point-min))
      (insert "* Shopping list\n- flour\n")
      (arcology-oracle-test--wait (lambda () (arcology-oracle-test--answered-p buffer)) 30 "the answer")
      (should (equal (arcology-oracle-test--answer-parent buffer) '(2 "Chat A")))
      (should (string-prefix-p "* Shopping list\n- flour\n* Chat A\n" (buffer-string)))
      ;; Deleted: nothing is inserted, and the answer is not lost.
      (erase-buffer)
      (insert two)
      (goto-char (point-min))
      (search-forward "feed my")
      (arcology-oracle-converse)
      (goto-char (point-min))
      (org-cut-subtree)
      (let ((left (buffer-string)))
        (arcology-oracle-test--capturing-messages messages
          (arcology-oracle-test--wait
           (lambda () (cl-find-if (lambda (m) (string-match-p "no longer holds the conversation's heading.*kill ring" m))
                                  messages))
           30 "the message about the kill ring"))
        (should (equal (buffer-string) left))
        (should (string-match-p (format "^[ \t]*:%s:" arcology-oracle-answer-property) (current-kill 0)))
        ;; The tag that found the heading is gone from the text once answered.
        (should-not (cl-loop for pos from (point-min) below (point-max)
                             thereis (cl-loop for (name _) on (text-properties-at pos) by #'cddr
                                              thereis (equal (symbol-name name) "arcology-oracle-conversation"))))))))

(ert-deftest arcology-oracle-test-converse-keeps-local-variables-found ()
  "An answer that would hide the buffer's Local Variables block from Emacs is not inserted.
Emacs reads that block only in a file's last 3000 characters: the
answer goes to the kill ring, and the block stays found."
  (arcology-oracle-test--with-daemon
    (let* ((text (concat "* Chat A\n** Me\nHow often should I feed my sourdough starter?\n"
                         "\n# Local Variables:\n# fill-column: 60\n# End:\n"))
           (buffer (arcology-oracle-test--conversation text))
           (long (mapconcat #'identity (make-list 70 "Feed it twice a week with rye flour and water, then wait.") "\n")))
      (should (assq 'fill-column (hack-local-variables--find-variables)))
      (arcology-oracle-test--fake-ollama `((chat_reply . ,long)))
      (unwind-protect
          (arcology-oracle-test--capturing-messages messages
            (arcology-oracle-converse)
            (arcology-oracle-test--wait
             (lambda () (cl-find-if (lambda (m) (string-match-p "Local Variables block.*kill ring" m)) messages))
             30 "the message about the kill ring"))
        (arcology-oracle-test--fake-ollama '((chat_reply . nil))))
      (with-current-buffer buffer
        (should (equal (buffer-string) text))
        (should (assq 'fill-column (hack-local-variables--find-variables))))
      (should (string-match-p "^Feed it twice a week" (current-kill 0))))))

(ert-deftest arcology-oracle-test-converse-read-only ()
  "A read-only buffer is refused before asking; one made read-only meanwhile gets nothing.
The answer then goes to the kill ring, and the message says so."
  (arcology-oracle-test--with-daemon
    (let* ((text "* Tomato questions\n** Me\nWhat causes blight on tomatoes?\n")
           (buffer (arcology-oracle-test--conversation text))
           (sent nil))
      (with-current-buffer buffer
        (setq buffer-read-only t)
        (cl-letf (((symbol-function 'arcology-oracle--json) (lambda (&rest args) (push args sent))))
          (should (equal (cadr (should-error (arcology-oracle-converse) :type 'user-error))
                         (format "Buffer %s is read-only" (buffer-name)))))
        (should-not sent)
        (setq buffer-read-only nil)
        (arcology-oracle-converse)
        (setq buffer-read-only t)
        (arcology-oracle-test--capturing-messages messages
          (arcology-oracle-test--wait
           (lambda () (cl-find-if (lambda (m) (string-match-p "became read-only: the answer is on the kill ring" m))
                                  messages))
           30 "the message about the kill ring")
          (should-not (cl-find-if (lambda (m) (string-match-p "buffer-read-only" m)) messages)))
        (should (equal (buffer-string) text))
        (should (string-prefix-p "** " (current-kill 0)))
        (should (string-match-p (format "^[ \t]*:%s:" arcology-oracle-answer-property) (current-kill 0)))))))

(ert-deftest arcology-oracle-test-converse-discard-without-final-newline ()
  "In a file without a final newline, discard and undo give the text back exactly."
  (arcology-oracle-test--with-daemon
    (let* ((text "* Tomato questions\n** Me\nWhat causes blight on tomatoes?")
           (buffer (arcology-oracle-test--conversation text)))
      (goto-char (point-max))
      (arcology-oracle-converse)
      (arcology-oracle-test--wait (lambda () (arcology-oracle-test--answered-p buffer)) 30 "the answer")
      (with-current-buffer buffer
        (should (org-entry-get nil arcology-oracle-answer-property))
        (should-not (string-suffix-p "\n" (buffer-string)))
        (let ((answered (buffer-string)))
          (arcology-oracle-discard)
          (should (equal (buffer-string) text))
          (undo-boundary)
          (let ((last-command nil)) (undo))
          (should (equal (buffer-string) answered)))))))

(ert-deftest arcology-oracle-test-discard-keeps-a-heading-typed-under-the-answer ()
  "An answer holding a heading the user typed under it is not discarded, from the
answer or from that heading; a plain answer is, and the message says how to undo it."
  (let ((text (concat "* Talk\n** Me\nWhy rye?\n** Oracle\n:PROPERTIES:\n:ORACLE_MODEL: m\n:END:\n"
                      "Rye ferments faster.\n*** My own thoughts\nI disagree.\n")))
    (dolist (from '("Rye ferments" "I disagree"))
      (with-temp-buffer
        (insert text)
        (org-mode)
        (goto-char (point-min))
        (search-forward from)
        (should (string-match-p "holds your heading \"My own thoughts\""
                                (cadr (should-error (arcology-oracle-discard) :type 'user-error))))
        (should (equal (buffer-string) text))))
    (with-temp-buffer
      (insert (car (split-string text "\\*\\*\\* ")))
      (org-mode)
      (goto-char (point-min))
      (search-forward "Rye ferments")
      (let ((message-log-max t))
        (arcology-oracle-discard)
        (should (equal (buffer-string) "* Talk\n** Me\nWhy rye?\n"))
        (with-current-buffer "*Messages*"
          (should (string-match-p "Discarded the answer \"Oracle\" (5 lines): .* brings it back\n\\'"
                                  (buffer-string))))))))

;;;; Privacy of the text sent

(ert-deftest arcology-oracle-test-private-here-reads-filetags-as-they-are-now ()
  "A #+filetags line typed or taken out (an undo of `arcology-oracle-make-private')
counts at once, without `org-mode-restart'."
  (with-temp-buffer
    (insert "#+title: X\n* A\nalpha\n")
    (org-mode)
    (goto-char (point-min))
    (search-forward "alpha")
    (should-not (arcology-oracle--private-here-p))
    (save-excursion (goto-char (point-min)) (end-of-line) (insert "\n#+filetags: :private:"))
    (should (arcology-oracle--private-here-p))
    (should (arcology-oracle--private-here-p (point-min)))
    (save-excursion (goto-char (point-min)) (search-forward "\n#+filetags: :private:") (replace-match ""))
    (should-not (arcology-oracle--private-here-p))
    (should-not (arcology-oracle--private-here-p (point-min)))))


(ert-deftest arcology-oracle-test-private-here ()
  "Point is private under a private or crypt tag (inherited, file tags) or ROAM_EXCLUDE."
  (dolist (case '(("#+filetags: :private:\n* A\nalpha\n" "alpha" t)
                  ("#+FILETAGS: :Private:\n#+title: X\nbefore the first heading\n* A\n" "before" t)
                  (":PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\n#+title: X\n* A\nbeta\n" "beta" t)
                  ("* P :Private:\n** Q\ngamma\n" "gamma" t)
                  ("* P\n:PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\n** Q\ndelta\n" "delta" t)
                  ("* P :crypt:\nzeta\n" "zeta" t)
                  ("* P\n:PROPERTIES:\n:ROAM_EXCLUDE: nil\n:END:\n** Q\nepsilon\n" "epsilon" nil)
                  ("* P :work:\n** Q\neta\n" "eta" nil)
                  ("#+title: plain\ntheta\n* A\n" "theta" nil)))
    (with-temp-buffer
      (insert (nth 0 case))
      (org-mode)
      (goto-char (point-min))
      (search-forward (nth 1 case))
      (let ((org-use-tag-inheritance nil))  ; the user's setting does not matter
        (should (eq (and (arcology-oracle--private-here-p) t) (nth 2 case)))))))

(ert-deftest arcology-oracle-test-visit-finds-a-node-org-roam-placed-before-an-edit ()
  "org-roam's stored position of a node is as of its last sync: after a line added
above the node it points elsewhere, and the entry is found by its :ID:."
  (with-temp-buffer
    (insert "#+title: N\n* First\nA line added since.\n* Target\n:PROPERTIES:\n:ID: visit-target-1\n:END:\nbody\n")
    (org-mode)
    (goto-char (point-min))
    (search-forward "A line added")
    (arcology-oracle--at-id "visit-target-1")
    (should (looking-at-p "\\* Target"))
    (arcology-oracle--at-id "visit-target-1")  ; already there: stays
    (should (looking-at-p "\\* Target"))
    (goto-char (point-min))
    (arcology-oracle--at-id "no-such-id")  ; not in the buffer: point stays
    (should (bobp))))

(ert-deftest arcology-oracle-test-private-in-a-source-block-s-edit-buffer ()
  "The buffer C-c ' opens on a block under a private heading is private too.
Its text is the block's, in python-mode or in Org mode, with nothing of
the heading's tags in it."
  (dolist (lang '("python" "org"))
    (with-temp-buffer
      (insert (format "* Secret :private:\n#+begin_src %s\nsecretline = 1\n#+end_src\n* Open\n#+begin_src %s\nopenline = 2\n#+end_src\n" lang lang))
      (org-mode)
      (dolist (case '(("secretline" t) ("openline" nil)))
        (goto-char (point-min))
        (search-forward (car case))
        (let ((org-src-window-setup 'current-window))
          (org-edit-special))
        (unwind-protect
            (progn
              (should (org-src-edit-buffer-p))
              (should (eq (and (arcology-oracle--private-here-p) t) (cadr case)))
              (should (eq (and (arcology-oracle--private-between-p (point-min) (point-max)) t) (cadr case))))
          (org-edit-src-abort))))))

(ert-deftest arcology-oracle-test-excerpt-leaves-private-parts-out ()
  "An excerpt of a long buffer that starts inside a private subtree sends none of it."
  (with-temp-buffer
    (insert "#+title: Journal\n* Therapy :private:\n** Session notes\n")
    (dotimes (i 30) (insert (format "The excerptiguana line %d.\n" i)))
    (insert "* Gardening\nTomatoes need excerptvisiblesun.\n")
    (org-mode)
    (goto-char (point-max))
    (let ((arcology-oracle-ask-max-chars 400))
      (let ((excerpt (arcology-oracle--buffer-excerpt (point-min) (point-max))))
        (should (string-match-p "excerptvisiblesun" excerpt))
        (should-not (string-match-p "excerptiguana" excerpt))))
    (let ((arcology-oracle-ask-max-chars 100000))  ; the whole buffer: its private subtree left out
      (let ((excerpt (arcology-oracle--buffer-excerpt (point-min) (point-max))))
        (should (string-prefix-p "#+title: Journal\n* Gardening\n" excerpt))))))

(ert-deftest arcology-oracle-test-converse-sends-nothing-from-a-private-part ()
  "A conversation under a private heading is refused in Emacs: nothing is sent."
  (let* ((text "* Therapy :private:\n** Chat :conversation:\n*** Me\nWhat about the dream?\n")
         (buffer (arcology-oracle-test--conversation text))
         (sent nil))
    (cl-letf (((symbol-function 'arcology-oracle--json) (lambda (&rest args) (push args sent))))
      (with-current-buffer buffer
        (should-error (arcology-oracle-converse) :type 'user-error)
        (should (equal (buffer-string) text))))
    (should-not sent)))

(provide 'arcology-oracle-test)

;;; arcology-oracle-test.el ends here
