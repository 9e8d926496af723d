;;; arcology-oracle-gptel-test.el --- ERT tests of arcology-oracle's gptel part -*- lexical-binding: t -*-

;;; Commentary:

;; The gptel backend and the notes tools.  gptel is not packaged for
;; Debian, so these tests run without it: the tool functions are plain
;; asynchronous functions, called here against the real daemon (the
;; fixtures of arcology-oracle-test.el, loaded first by
;; tests/elisp/test_elisp.py).  bench/gptel_tools_check.py drives the same
;; tools through real gptel's tool-use loop when gptel's source is at
;; hand.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'arcology-oracle)
(require 'arcology-oracle-test)

(defvar gptel-tools)
(defvar gptel-model)
(defvar gptel-backend)

;;;; Loading

(ert-deftest arcology-oracle-gptel-test-loading-needs-no-gptel ()
  "The gptel part requires no gptel library when it loads."
  (let* ((file (locate-library "arcology-oracle-gptel"))
         (entry (cl-find-if (lambda (e) (and (stringp (car e))
                                             (equal (file-name-sans-extension (car e))
                                                    (file-name-sans-extension file))))
                            load-history))
         (required (delq nil (mapcar (lambda (x) (and (eq (car-safe x) 'require) (cdr x)))
                                     (cdr entry)))))
    (should entry)
    (should (memq 'arcology-oracle-http required))
    (should-not (cl-find-if (lambda (f) (string-prefix-p "gptel" (symbol-name f))) required))))

;;;; Tool definitions (pure)

(ert-deftest arcology-oracle-gptel-test-tool-specs ()
  "Three asynchronous tools whose functions take a callback and their arguments."
  (let ((specs (arcology-oracle-gptel-tool-specs)))
    (should (equal (mapcar (lambda (s) (plist-get s :name)) specs)
                   '("search_notes" "read_note" "similar_notes")))
    (dolist (spec specs)
      (should (eq (plist-get spec :async) t))
      (should (stringp (plist-get spec :description)))
      (let ((arity (func-arity (plist-get spec :function)))
            (args (plist-get spec :args)))
        ;; The callback, then one argument per declared one, optional ones last.
        (should (= (cdr arity) (1+ (length args))))
        (should (= (car arity) (1+ (cl-count-if-not (lambda (a) (plist-get a :optional)) args))))
        (dolist (arg args)
          (should (memq (plist-get arg :type) '(string integer)))
          (should (stringp (plist-get arg :description))))))))

(ert-deftest arcology-oracle-gptel-test-add-tools-replaces-its-own ()
  "Adding the tools keeps other tools and replaces earlier notes tools."
  (let ((gptel-tools (list '(:name "search_notes" :old t) '(:name "read_buffer"))))
    ;; Stand-ins for gptel's constructor and accessor: gptel is not installed here.
    (cl-letf (((symbol-function 'gptel-make-tool) (lambda (&rest spec) spec))
              ((symbol-function 'gptel-tool-name) (lambda (tool) (plist-get tool :name))))
      (arcology-oracle-gptel-add-tools)
      (arcology-oracle-gptel-add-tools))
    (should (equal (mapcar (lambda (tool) (plist-get tool :name)) gptel-tools)
                   '("read_buffer" "search_notes" "read_note" "similar_notes")))
    (should-not (cl-find-if (lambda (tool) (plist-get tool :old)) gptel-tools))))

(ert-deftest arcology-oracle-gptel-test-format-node-with-bodies ()
  "A node with bodies, sub-headings, links and backlinks becomes org text without headings."
  (should (equal (arcology-oracle-gptel--format-node
                  '((node_id . "n1") (title . "Bread") (file . "bread.org") (line . 1) (level . 0)
                    (tags "baking") (aliases "Loaf") (date)
                    (headings ((heading . "Bread") (level . 0)
                               (body . "#+title: Bread\n#+FILETAGS: :baking:\nIntro *bold*.\n\nMore."))
                              ((heading . "Proof") (level . 1) (heading_id . "h1") (todo . "TODO")
                               (body . "Wait.\n* not a heading"))
                              ((heading . "Cold") (level . 2) (body . "")))
                    (links ((node_id . "n2") (title . "Flour")))
                    (backlinks ((node_id . "n3") (title . "2024-03-01")))))
                 (concat "[[id:n1][Bread]] (bread.org:1), tags: baking\n"
                         "Aliases: Loaf\n"
                         "\nIntro *bold*.\n\nMore.\n"
                         "- [[id:h1][TODO Proof]]\n"
                         "  Wait.\n"
                         "  * not a heading\n"
                         "  - Cold\n"
                         "Links: [[id:n2][Flour]]\n"
                         "Backlinks: [[id:n3][2024-03-01]]\n")))
  (let ((arcology-oracle-gptel-tool-max-chars 10))
    (should (equal (arcology-oracle-gptel--cut "0123456789abc")
                   "0123456789\n[… cut here: 3 more characters]"))))

(ert-deftest arcology-oracle-gptel-test-format-node-marks-the-oracles-words ()
  "Headings the daemon says are the oracle's (role) are marked so, as search results are."
  (should (equal (arcology-oracle-gptel--format-node
                  '((node_id . "n1") (title . "Kiln talk") (file . "k.org") (line . 1) (level . 0)
                    (headings ((heading . "Kiln talk") (level . 0) (body . ""))
                              ((heading . "Me") (level . 1) (role . "conversation") (body . "Why?"))
                              ((heading . "Oracle") (level . 1) (role . "oracle") (body . "Because.")))))
                 (concat "[[id:n1][Kiln talk]] (k.org:1)\n"
                         "- Me [conversation]\n  Why?\n"
                         "- Oracle [oracle answer]\n  Because.\n")))
  (should (string-prefix-p
           "[[id:n2][Summary]] (s.org:1) [oracle answer]\n"
           (arcology-oracle-gptel--format-node
            '((node_id . "n2") (title . "Summary") (file . "s.org") (line . 1) (level . 0)
              (headings ((heading . "Summary") (level . 0) (role . "oracle") (body . "Words."))))))))

(ert-deftest arcology-oracle-gptel-test-format-node-marks-a-reply-in-the-users-heading ()
  "A grounded model's reply in a heading of the user's (its `replies') is marked as such.
The heading is the user's (no role); its reply's lines, as the daemon gives them, go
between #+begin_oracle and #+end_oracle, the user's lines stay as written."
  (should (equal (arcology-oracle-gptel--format-node
                  '((node_id . "n1") (title . "Tenmoku chat") (file . "t.org") (line . 1) (level . 0)
                    (headings ((heading . "Tenmoku chat") (level . 0) (body . "") (end_line . 5) (replies))
                              ((heading . "Hold?") (level . 1) (line . 6) (end_line . 10)
                               (body . "GPTELREPLY twenty minutes.\nAs your log says.\n\nMYTYPED I tried it.")
                               (replies ((line . 7) (end_line . 9)))))))
                 (concat "[[id:n1][Tenmoku chat]] (t.org:1)\n"
                         "- Hold?\n"
                         "  #+begin_oracle\n  GPTELREPLY twenty minutes.\n  As your log says.\n  #+end_oracle\n"
                         "\n  MYTYPED I tried it.\n"))))

(ert-deftest arcology-oracle-gptel-test-arguments ()
  "Counts and IDs as models send them."
  (should (= (arcology-oracle-gptel--count nil) 5))
  (should (= (arcology-oracle-gptel--count "7") 7))
  (should (= (arcology-oracle-gptel--count 3.6) 4))
  (should (= (arcology-oracle-gptel--count 500) 20))
  (should (= (arcology-oracle-gptel--count "many") 5))
  (should (equal (arcology-oracle-gptel--node-id "id:abc-1") "abc-1"))
  (should (equal (arcology-oracle-gptel--node-id " [[id:abc-1][Title]] ") "abc-1"))
  (should (equal (arcology-oracle-gptel--node-id "abc-1") "abc-1"))
  (should-not (arcology-oracle-gptel--node-id "two words"))
  (should-not (arcology-oracle-gptel--node-id 42)))

;;;; Tool functions against the daemon

(defun arcology-oracle-gptel-test--call (function &rest args)
  "Call the tool FUNCTION with a callback and ARGS; return the text it gets.
Fail unless the callback runs exactly once, after FUNCTION returned."
  (let ((calls nil) (returned nil))
    (apply function (lambda (text) (push (cons returned text) calls)) args)
    (setq returned t)
    (arcology-oracle-test--wait (lambda () calls) 20 "the tool's callback")
    (arcology-oracle-test--settled)
    (should (= (length calls) 1))
    (should (eq (car (car calls)) t))
    (should (stringp (cdr (car calls))))
    (cdr (car calls))))

(defun arcology-oracle-gptel-test--no-headings (text)
  "Fail when a line of TEXT is an org heading."
  (should-not (string-match-p "^\\*+ " text)))

(ert-deftest arcology-oracle-gptel-test-search-notes ()
  "search_notes answers with an org list of id: links, file:line and snippets."
  (arcology-oracle-test--with-daemon
    (let* ((text (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-search-notes
                                                   "sourdough starter" 3))
           (lines (split-string text "\n")))
      (should (equal (car lines) "Notes matching \"sourdough starter\":"))
      (should (= (length (cdr lines)) 3))
      (should (cl-every (lambda (l) (string-match-p "\\`- \\[\\[id:[-0-9a-f]+\\]\\[[^]]+\\]\\] ([^)]+:[0-9]+): ." l))
                        (cdr lines)))
      (should (member (format "- [[id:%s][Sourdough Baking]] (sourdough-baking.org:1): My working notes on baking naturally leavened sourdough bread at home. The dough formula itself lives …"
                              (arcology-oracle-test--id 'sourdough))
                      lines))
      ;; A heading below "Starter maintenance" (its node): both words are in its context.
      (should (cl-find-if (lambda (l) (string-prefix-p "- [[id:612f2887-9442-410d-b965-d901189a423b][Starter maintenance" l))
                          lines)))
    ;; A string count, as some models send it.
    (let ((text (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-search-notes
                                                  "tomato blight" "1")))
      (should (= (length (split-string text "\n")) 2)))))

(ert-deftest arcology-oracle-gptel-test-read-note ()
  "read_note gives the note's link, file, tags and headings; never a private heading."
  (arcology-oracle-test--with-daemon
    (let ((text (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-read-note
                                                  (arcology-oracle-test--id 'sourdough))))
      (should (string-prefix-p
               (format "[[id:%s][Sourdough Baking]] (sourdough-baking.org:1), tags: baking, bread\n"
                       (arcology-oracle-test--id 'sourdough))
               text))
      (should (string-match-p "^- Bulk fermentation\n  Bulk fermentation starts when the levain goes into the dough\\." text))
      (should (string-match-p "^My working notes on baking naturally leavened sourdough" text))
      (should-not (string-match-p "#\\+title" text))
      (should (string-match-p (regexp-quote (format "\nBacklinks: [[id:%s][2024-03-01]]"
                                                    (arcology-oracle-test--id 'journal-0301)))
                              text))
      (should (string-match-p "^- Shaping and scoring$" text))
      ;; Starter maintenance is a node of its own, not a heading of this one.
      (should-not (string-match-p "^- Starter maintenance" text))
      (arcology-oracle-gptel-test--no-headings text))
    (let ((text (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-read-note
                                                  (format "[[id:%s][2024-03-01]]" (arcology-oracle-test--id 'journal-0301)))))
      (should (string-prefix-p "[[id:82d51f3b-e80f-480b-be14-813a52374265][2024-03-01]] (journal/2024-03-01.org:1), tags: journal\nDate: 2024-03-01\n" text))
      (should (string-match-p "^- Baked a sourdough loaf$" text))
      (should-not (string-match-p "Private thoughts\\|privatepelican\\|Even more private" text)))))

(ert-deftest arcology-oracle-gptel-test-similar-notes ()
  "similar_notes lists the notes near a node, or near a text."
  (arcology-oracle-test--with-daemon
    (let ((text (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-similar-notes
                                                  (arcology-oracle-test--id 'hydration) 3)))
      (should (string-prefix-p (format "Notes similar to [[id:%s]]:\n" (arcology-oracle-test--id 'hydration))
                               text))
      (should (= (length (split-string text "\n")) 4))
      (should (string-match-p (regexp-quote (format "[[id:%s][Sourdough Baking › Bulk fermentation]]"
                                                    (arcology-oracle-test--id 'sourdough)))
                              text))
      (should-not (string-match-p (regexp-quote (format "[[id:%s]" (arcology-oracle-test--id 'hydration)))
                                  (substring text (string-search "\n" text)))))
    (let ((text (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-similar-notes
                                                  nil nil "feeding the wild yeast starter with flour and water")))
      (should (string-prefix-p "Notes similar to the text:\n" text))
      (should (string-match-p "\\[\\[id:612f2887-9442-410d-b965-d901189a423b\\]\\[Starter maintenance\\]\\]" text)))))

(ert-deftest arcology-oracle-gptel-test-tool-errors-reach-the-callback ()
  "Unknown IDs, missing arguments and a daemon that is down come back as text, once."
  (arcology-oracle-test--with-daemon
    (should (equal (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-read-note "no-such-note")
                   "Error: no node with ID 'no-such-note' in the index (HTTP 404)"))
    (should (equal (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-search-notes nil)
                   "Error: search_notes needs a query"))
    (should (equal (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-search-notes 42)
                   "Error: search_notes needs a query"))
    (should (equal (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-read-note "two words")
                   "Error: read_note needs an org-roam ID"))
    (should (equal (arcology-oracle-gptel-test--call #'arcology-oracle-gptel-similar-notes nil)
                   "Error: similar_notes needs an id or a text"))
    (let ((arcology-oracle-url (arcology-oracle-test--free-url)))
      (dolist (call (list (list #'arcology-oracle-gptel-search-notes "bread")
                          (list #'arcology-oracle-gptel-read-note (arcology-oracle-test--id 'sourdough))
                          (list #'arcology-oracle-gptel-similar-notes (arcology-oracle-test--id 'sourdough))))
        (should (equal (apply #'arcology-oracle-gptel-test--call call)
                       (format "Error: daemon not reachable at %s (connection refused): start it (arcology-oracle serve)"
                               arcology-oracle-url)))))))

;;;; Backend

(ert-deftest arcology-oracle-gptel-test-grounded-models ()
  "The gptel backend offers the grounded models when the daemon lists any."
  (should (equal (arcology-oracle--grounded-models
                  '((models ((name . "nomic-embed-text:latest")) ((name . "llama3.2:latest"))
                            ((name . "llama3.2+notes")) ((name . "qwen2.5:7b+notes")))))
                 '("llama3.2+notes" "qwen2.5:7b+notes")))
  (should (equal (arcology-oracle--grounded-models '((models ((name . "llama3.2")))))
                 '("llama3.2"))))

;; gptel is not packaged in Debian: unless it is installed, a stand-in
;; struct and constructor take the place of gptel's, with the slots
;; arcology-oracle uses.
(ert-deftest arcology-oracle-gptel-test-backend ()
  "The gptel backend points at the daemon with the token header and its models."
  (arcology-oracle-test--with-daemon
    (let ((stand-in (not (locate-library "gptel-ollama")))
          (arcology-oracle-gptel-models '("before+notes"))
          args expected)
      (when (and stand-in (not (get 'gptel-backend 'cl--class)))
        (eval '(cl-defstruct (gptel-backend (:constructor arcology-oracle-test--gptel-backend)
                                            (:copier nil))
                 name host header protocol stream endpoint models)
              t))
      ;; What the daemon says its models are, if it has the Ollama API.
      (arcology-oracle--json
       "GET" "/api/tags"
       :callback (lambda (answer)
                   (setq expected (or (mapcar #'intern (arcology-oracle--grounded-models answer))
                                      '(before+notes))))
       :errback (lambda (_) (setq expected '(before+notes))))
      (arcology-oracle-test--wait (lambda () expected))
      (cl-letf (((symbol-function 'gptel-make-ollama)
                 (if stand-in
                     (lambda (name &rest rest)
                       (setq args rest)
                       (funcall #'arcology-oracle-test--gptel-backend
                                :name name :host (plist-get rest :host)
                                :header (plist-get rest :header)
                                :protocol (plist-get rest :protocol)
                                :stream (plist-get rest :stream)
                                :endpoint (plist-get rest :endpoint)
                                :models (plist-get rest :models)))
                   (let ((real (symbol-function 'gptel-make-ollama)))
                     (lambda (name &rest rest)
                       (setq args rest)
                       (apply real name rest))))))
        (let* ((backend (arcology-oracle-gptel-backend))
               (url (url-generic-parse-url arcology-oracle-url)))
          (should (equal (plist-get args :host) (format "%s:%d" (url-host url) (url-port url))))
          (should (equal (plist-get args :protocol) "http"))
          (should (equal (plist-get args :endpoint) "/api/chat"))
          (should (eq (plist-get args :stream) t))
          (should (equal (plist-get args :models) '(before+notes)))
          ;; gptel 0.9.9.5 and later pass the request's state; older ones nothing.
          (dolist (call-args '(() ((:backend nil :data nil))))
            (should (equal (apply (plist-get args :header) call-args)
                           `(("Authorization" . ,(concat "Bearer " arcology-oracle-token))))))
          ;; The daemon's model list replaces the configured one when it arrives.
          (arcology-oracle-test--wait
           (lambda () (equal (mapcar (lambda (m) (if (consp m) (car m) m))
                                     (aref backend (cl-struct-slot-offset 'gptel-backend 'models)))
                             expected))
           10 "the daemon's models"))))))

;; The README's set-up with a daemon whose Ollama has no llama3.2: gptel
;; took its first model quietly, which may not even be grounded.
(ert-deftest arcology-oracle-gptel-test-backend-says-the-model-is-missing ()
  "A `gptel-model' the daemon does not offer is named once, with gptel's pick."
  (arcology-oracle-test--with-daemon
    (unless (or (locate-library "gptel-ollama") (get 'gptel-backend 'cl--class))
      (eval '(cl-defstruct (gptel-backend (:constructor arcology-oracle-test--gptel-backend)
                                          (:copier nil))
               name host header protocol stream endpoint models)
            t))
    (let ((gptel-model 'llama3.2+notes)
          (gptel-backend nil)
          (start (with-current-buffer (messages-buffer) (point-max)))
          backend)
      (arcology-oracle-test--fake-ollama '((models . ["nomic-embed-text" "qwen2.5:7b"])))
      (unwind-protect
          (cl-letf (((symbol-function 'gptel-make-ollama)
                     (or (and (locate-library "gptel-ollama") (require 'gptel-ollama)
                              (symbol-function 'gptel-make-ollama))
                         (lambda (name &rest rest)
                           (funcall #'arcology-oracle-test--gptel-backend
                                    :name name :models (plist-get rest :models))))))
            (setq backend (arcology-oracle-gptel-backend)
                  gptel-backend backend)
            (arcology-oracle-test--wait
             (lambda () (with-current-buffer (messages-buffer)
                          (save-excursion (goto-char start) (search-forward "gptel uses" nil t))))
             10 "the message")
            (let ((said (with-current-buffer (messages-buffer)
                          (buffer-substring start (point-max)))))
              (should (string-match-p
                       (regexp-quote "no llama3.2+notes model (ollama pull llama3.2 on the daemon's Ollama adds it), so gptel uses qwen2.5:7b+notes")
                       said))
              (should (= 1 (cl-count-if (lambda (line) (string-match-p "gptel uses" line))
                                        (split-string said "\n"))))))
        (arcology-oracle-test--fake-ollama
         '((models . ["nomic-embed-text" "all-minilm" "llama3.2" "qwen2.5:7b"])))))))

;; gptel sets its model and backend per buffer too (`gptel-menu', `setq-local'):
;; the check read only the global ones.
(ert-deftest arcology-oracle-gptel-test-the-model-missing-is-the-chat-buffer-s ()
  "The check reads gptel's model and backend in the chat buffer that made the backend:
its own missing model is named though the global backend is another; a model of its
own the daemon offers is not called missing though the global one is missing."
  (arcology-oracle-test--with-daemon
    (unless (or (locate-library "gptel-ollama") (get 'gptel-backend 'cl--class))
      (eval '(cl-defstruct (gptel-backend (:constructor arcology-oracle-test--gptel-backend)
                                          (:copier nil))
               name host header protocol stream endpoint models)
            t))
    (let ((gptel-model 'llama3.2+notes)  ; the global ones: another service's backend
          (gptel-backend 'another-service)
          (chat (generate-new-buffer "*chat*")))
      (arcology-oracle-test--fake-ollama '((models . ["nomic-embed-text" "qwen2.5:7b"])))
      (unwind-protect
          (cl-letf (((symbol-function 'gptel-make-ollama)
                     (or (and (locate-library "gptel-ollama") (require 'gptel-ollama)
                              (symbol-function 'gptel-make-ollama))
                         (lambda (name &rest rest)
                           (funcall #'arcology-oracle-test--gptel-backend
                                    :name name :models (plist-get rest :models))))))
            (dolist (case '((mistral+notes t) (qwen2.5:7b+notes nil)))
              (let ((start (with-current-buffer (messages-buffer) (point-max)))
                    (models nil))
                (with-current-buffer chat
                  (setq-local gptel-model (car case))
                  (setq-local gptel-backend (arcology-oracle-gptel-backend)))
                ;; The daemon's models came: the check has run.
                (arcology-oracle-test--wait
                 (lambda () (setq models (aref (buffer-local-value 'gptel-backend chat)
                                               (cl-struct-slot-offset 'gptel-backend 'models)))
                   (not (equal (mapcar (lambda (m) (if (consp m) (car m) m)) models) '(llama3.2+notes))))
                 10 "the daemon's models")
                (let ((said (with-current-buffer (messages-buffer) (buffer-substring start (point-max)))))
                  (message "model %s: %S" (car case) said)
                  (if (cadr case)
                      (should (string-match-p (regexp-quote (format "no %s model" (car case))) said))
                    (should-not (string-match-p "gptel uses" said)))))))
        (kill-buffer chat)
        (arcology-oracle-test--fake-ollama
         '((models . ["nomic-embed-text" "all-minilm" "llama3.2" "qwen2.5:7b"])))))))

(provide 'arcology-oracle-gptel-test)

;;; arcology-oracle-gptel-test.el ends here
