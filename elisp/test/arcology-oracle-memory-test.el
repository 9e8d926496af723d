;;; arcology-oracle-memory-test.el --- ERT tests for arcology-oracle-memory -*- lexical-binding: t -*-

;;; Commentary:

;; Against the real daemon, with the fixtures of
;; arcology-oracle-test.el (tests/elisp/test_elisp.py runs every ERT file):
;; `arcology-oracle-memorize' from a region, from the
;; minibuffer, with the daily locked by Emacs itself and with
;; it unsaved in an Emacs that makes no lock files;
;; `arcology-oracle-make-private' tagging a heading, which leaves the
;; index once the file is saved.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle-memory)
(require 'arcology-oracle-test)

(defmacro arcology-oracle-memory-test--with-daemon (&rest body)
  "Run BODY against the test daemon, without default capture tags."
  (declare (indent 0) (debug t))
  `(arcology-oracle-test--with-daemon
     (let ((arcology-oracle-memorize-tags nil))
       ,@body)))

(defun arcology-oracle-memory-test--memorize (text &optional title tags)
  "Call `arcology-oracle-memorize' with TEXT, TITLE and TAGS; return the answer."
  (let (answer)
    (arcology-oracle-memorize text title tags (lambda (a) (setq answer a)))
    (arcology-oracle-test--wait (lambda () answer) 20 "the daemon's answer")))

(defun arcology-oracle-memory-test--search (query)
  "Return the heading IDs the daemon's /search finds for QUERY."
  (let (answer)
    (arcology-oracle--json "GET" "/search" :query `(("q" ,query))
                           :callback (lambda (a) (setq answer a))
                           :errback (lambda (m) (setq answer m)))
    (arcology-oracle-test--wait (lambda () answer))
    (when (stringp answer) (ert-fail answer))
    (mapcar (lambda (r) (alist-get 'heading_id r)) (alist-get 'results answer))))

(defun arcology-oracle-memory-test--daily ()
  "Return the absolute path of today's daily note in the test roam directory."
  (expand-file-name (format-time-string "daily/%Y-%m-%d.org")
                    (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))

(ert-deftest arcology-oracle-memory-test-payload ()
  "The JSON sent: text, optional title, tags as a vector (the defaults when none)."
  (let ((arcology-oracle-memorize-tags '("phone")))
    (should (equal (arcology-oracle--memory-payload "x" nil nil) '((text . "x") (tags . ["phone"]))))
    (should (equal (arcology-oracle--memory-payload "x" "T" '("a" "b"))
                   '((text . "x") (title . "T") (tags . ["a" "b"]))))
    (should (equal (arcology-oracle--memory-payload "x" nil nil nil nil nil '("daily/d.org"))
                   '((text . "x") (tags . ["phone"]) (unsaved . ["daily/d.org"]))))))

(ert-deftest arcology-oracle-memory-test-dailies-in-the-roam-directory-itself ()
  "`org-roam-dailies-directory' \"./\" is sent as \".\": the roam directory, not the daemon's folder."
  (let ((roam (file-name-as-directory (make-temp-file "roam" t))))
    (unwind-protect
        (progn
          (should (equal (arcology-oracle--dailies-dir roam roam) "."))
          (should (equal (arcology-oracle--dailies-dir (expand-file-name "journal/" roam) roam) "journal"))
          (should-not (arcology-oracle--dailies-dir (expand-file-name "../" roam) roam)))
      (delete-directory roam t))))

(ert-deftest arcology-oracle-memory-test-typed-text-links-to-the-heading-at-point ()
  "Text typed at C-c o M's prompt gets a :SOURCE: too: the heading point was in (as
the README says now; it told of a region's only)."
  (let ((file (make-temp-file "typed" nil ".org")))
    (unwind-protect
        (with-temp-buffer
          (insert "#+title: Starters\n* Rye starter\nFeed it rye flour.\n")
          (setq buffer-file-name file)
          (org-mode)
          (search-backward "rye flour")
          (deactivate-mark)
          (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "Try spelt next")))
            (let ((args (advice-eval-interactive-spec
                         (cadr (interactive-form 'arcology-oracle-memorize)))))
              (should (equal (car args) "Try spelt next"))
              (should (equal (nth 4 args) (arcology-oracle--memory-source (point))))
              (should (string-match-p "::\\*Rye starter\\]" (nth 4 args)))))
          (set-buffer-modified-p nil)
          (setq buffer-file-name nil))
      (delete-file file))))

(ert-deftest arcology-oracle-memory-test-source-of-a-first-line-heading ()
  "In a file whose first line is a heading, its body's source names that heading."
  (let ((file (make-temp-file "firsthead" nil ".org")))
    (unwind-protect
        (with-temp-buffer
          (insert "* Rye starter\nFeed it rye flour.\n* Wheat starter\nOther.\n")
          (setq buffer-file-name file)
          (org-mode)
          (goto-char (point-min))
          (search-forward "rye flour")
          (should (equal (arcology-oracle--memory-source (point))
                         (org-link-make-string
                          (format "file:%s::*Rye starter" (abbreviate-file-name file))
                          (format "%s › Rye starter" (file-name-base file)))))
          (set-buffer-modified-p nil)
          (setq buffer-file-name nil))
      (delete-file file))))

(ert-deftest arcology-oracle-memory-test-source-from-an-indirect-buffer ()
  "A region remembered from an indirect buffer (C-x 4 c, to read one subtree)
links back to its heading as from the note's own buffer (it had no :SOURCE:)."
  (let ((file (make-temp-file "indirect" nil ".org")))
    (unwind-protect
        (let* ((base (progn (write-region "#+title: Bake\n* Starter\n** Reviving it\nDiscard all but a spoonful.\n"
                                          nil file nil 'silent)
                            (find-file-noselect file)))
               (from-base (with-current-buffer base
                            (goto-char (point-max))
                            (arcology-oracle--memory-source (1- (point)))))
               (indirect (with-current-buffer base (clone-indirect-buffer nil nil))))
          (unwind-protect
              (with-current-buffer indirect
                (goto-char (point-max))
                (should (string-match-p "::\\*Reviving it\\]\\[Bake › Starter › Reviving it\\]\\]" from-base))
                (should (equal (arcology-oracle--memory-source (1- (point))) from-base)))
            (kill-buffer indirect)
            (kill-buffer base)))
      (delete-file file))))

(ert-deftest arcology-oracle-memory-test-the-oracle-s-words-are-kept-as-its-own ()
  "A region of an answer (the answers buffer, or a conversation's answer heading) is
sent with role oracle; the user's own text without."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (dolist (case '((arcology-oracle-answers-mode "* What about rye?\nRye ferments faster [1].\n" "oracle")
                      (org-mode "* Talk\n** Me\nWhy?\n** Oracle\n:PROPERTIES:\n:ORACLE_MODEL: m\n:END:\nRye ferments faster [1].\n" "oracle")
                      (org-mode "* Talk\n** Me\nWhy?\n** Oracle\n:PROPERTIES:\n:ROLE: Assistant\n:END:\nRye ferments faster [1].\n" "oracle")
                      (org-mode "* My note\nRye ferments faster, I found.\n" nil)
                      ;; From the question into the answer: the answer's words are in it.
                      (org-mode "* Talk\n** Me\nRye ferments faster?\n** Oracle\n:PROPERTIES:\n:ROLE: oracle\n:END:\nYes.\n" "oracle")))
        (with-temp-buffer
          (insert (nth 1 case))
          (funcall (car case))
          (let ((inhibit-read-only t)) (transient-mark-mode 1))
          (goto-char (point-min))
          (search-forward "Rye ferments")
          (set-mark (line-beginning-position))
          (goto-char (point-max))
          (call-interactively #'arcology-oracle-memorize)
          (should (equal (alist-get 'role (car sent)) (nth 2 case)))
          (should (string-prefix-p "Rye ferments" (alist-get 'text (car sent)))))))))

;; Review (memory): a region of a reply in a gptel chat with one of the daemon's
;; grounded models (llama3.2+notes) was kept as the user's note, though the daemon
;; reads those replies as the oracle's words.
(defun arcology-oracle-memory-test--gptel-chat (model prompt reply &optional more bounded)
  "A gptel chat saved in org with MODEL: PROMPT as a heading, REPLY under it, then MORE.
With BOUNDED, GPTEL_BOUNDS holds REPLY's positions, as gptel saves them."
  (let ((text "") (points "()"))
    (dotimes (_ 4)  ; the positions depend on their own length: a fixed point
      (setq text (concat ":PROPERTIES:\n:GPTEL_MODEL: " model "\n"
                         (if bounded (format ":GPTEL_BOUNDS: ((response %s))\n" points) "")
                         ":END:\n#+title: Chat\n\n*** " prompt "\n\n" reply "\n\n" (or more "")))
      (let ((at (1+ (string-match (regexp-quote reply) text))))
        (setq points (format "(%d %d)" at (+ at (length reply))))))
    text))

(ert-deftest arcology-oracle-memory-test-a-grounded-gptel-reply-is-the-oracle-s ()
  "A region holding a reply of a gptel chat with a grounded model is sent with role
oracle (by GPTEL_BOUNDS, by gptel's own text properties); the chat's prompt alone, a chat
saved without bounds (gptel saved no reply), and a chat with another model are the user's."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (dolist (case `((,(arcology-oracle-memory-test--gptel-chat "llama3.2+notes" "Why rye?" "Rye ferments faster." nil t)
                       "Rye ferments" "oracle")
                      ;; gptel's state saved without bounds: it held no reply, all is the user's.
                      (,(arcology-oracle-memory-test--gptel-chat "llama3.2+notes" "Why rye?" "Rye ferments faster.")
                       "Rye ferments" nil)
                      (,(arcology-oracle-memory-test--gptel-chat "qwen2.5+notes:7b" "Why rye?" "Rye ferments faster." nil t)
                       "Rye ferments" "oracle")
                      ;; The prompt after the reply, alone in the region: the user's.
                      (,(arcology-oracle-memory-test--gptel-chat "llama3.2+notes" "Why rye?" "Because." "*** Rye ferments faster?\n" t)
                       "Rye ferments" nil)
                      (,(arcology-oracle-memory-test--gptel-chat "gpt-4o" "Why rye?" "Rye ferments faster." nil t)
                       "Rye ferments" nil)))
        (with-temp-buffer
          (insert (nth 0 case))
          (org-mode)
          (let ((inhibit-read-only t)) (transient-mark-mode 1))
          (goto-char (point-min))
          (search-forward (nth 1 case))
          (set-mark (line-beginning-position))
          (goto-char (point-max))
          (call-interactively #'arcology-oracle-memorize)
          (should (equal (alist-get 'role (car sent)) (nth 2 case)))))
      ;; A live chat: gptel's text property says which text is the model's.
      (with-temp-buffer
        (insert "Why rye?\n\n" (propertize "Rye ferments faster." 'gptel 'response) "\n\nAnd wheat?\n")
        (org-mode)
        (setq-local gptel-model 'llama3.2+notes)
        (transient-mark-mode 1)
        (goto-char (point-min))
        (search-forward "Rye ferments")
        (set-mark (line-beginning-position))
        (goto-char (line-end-position))
        (call-interactively #'arcology-oracle-memorize)
        (should (equal (alist-get 'role (car sent)) "oracle"))
        (goto-char (point-max))
        (set-mark (line-beginning-position 0))
        (call-interactively #'arcology-oracle-memorize)
        (should (equal (alist-get 'text (car sent)) "And wheat?\n"))
        (should-not (alist-get 'role (car sent)))))))

(ert-deftest arcology-oracle-memory-test-a-new-gptel-chat-with-the-readme-s-model ()
  "With the README's gptel set-up (`gptel-model' set globally to llama3.2+notes), a
reply in a new chat (\\[gptel], not saved: no :GPTEL_MODEL:) is the oracle's words:
only a buffer-local model counted, so it was sent as the user's note.  The global
model counts in a gptel chat only: a plain note stays the user's."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (cl-progv '(gptel-model) '(llama3.2+notes)
        (with-temp-buffer
          (insert "*** Why rye?\n" (propertize "Rye ferments faster." 'gptel 'response) "\n\n*** And wheat?\n")
          (org-mode)
          (setq-local gptel-mode t)
          (transient-mark-mode 1)
          (goto-char (point-min))
          (search-forward "Rye ferments")
          (set-mark (line-beginning-position))
          (goto-char (line-end-position))
          (call-interactively #'arcology-oracle-memorize)
          (should (equal (alist-get 'role (car sent)) "oracle")))
        ;; A note of the user's, not a chat: under a heading, but the user's.
        (with-temp-buffer
          (insert "* Bread\nRye ferments faster.\n")
          (org-mode)
          (transient-mark-mode 1)
          (goto-char (point-min))
          (search-forward "Rye ferments")
          (set-mark (line-beginning-position))
          (goto-char (line-end-position))
          (call-interactively #'arcology-oracle-memorize)
          (should (equal (alist-get 'text (car sent)) "Rye ferments faster."))
          (should-not (alist-get 'role (car sent))))))))

(ert-deftest arcology-oracle-memory-test-a-gptel-reply-in-a-note-without-gptel-mode ()
  "gptel answers in any buffer (\\[gptel-send] in a note, gptel-mode off): with the
README's global model llama3.2+notes, a region of the reply it inserted (its gptel
property) is the oracle's words; the user's own line beside it stays the user's."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (cl-progv '(gptel-model) '(llama3.2+notes)
        (dolist (case '(("Rye ferments faster" "oracle") ("Why does rye" nil)))
          (with-temp-buffer
            (insert "* Bread\nWhy does rye rise so fast?\n"
                    (propertize "Rye ferments faster." 'gptel 'response) "\n")
            (org-mode)
            (transient-mark-mode 1)
            (goto-char (point-min))
            (search-forward (nth 0 case))
            (set-mark (line-beginning-position))
            (goto-char (line-end-position))
            (call-interactively #'arcology-oracle-memorize)
            (should (equal (list (nth 0 case) (alist-get 'role (car sent)))
                           (list (nth 0 case) (nth 1 case))))))))))

;; The daemon reads a turn of a conversation tagged :oracle: or titled Oracle (alone or
;; before punctuation) as the oracle's, beside a sibling with a :ROLE:.
(ert-deftest arcology-oracle-memory-test-a-conversation-s-oracle-turn-by-its-marker ()
  "A region of a conversation's turn tagged :oracle: or titled Oracle, or of a heading
below it, is sent with role oracle, as the daemon reads it; a turn titled Oracle of
Delphi, a turn with a user's :ROLE: and an Oracle heading in no conversation are not."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (dolist (case '(("Because of its enzymes" "oracle")
                      ("Rye has more amylase" "oracle")
                      ("Amylase in detail" "oracle")
                      ("My own note on Delphi" nil)
                      ("I wonder" nil)
                      ("Not a conversation" nil)))
        (with-temp-buffer
          (insert "* Sourdough\n** Why does rye ferment faster?\n:PROPERTIES:\n:ROLE: user\n:END:\n"
                  "I wonder.\n** Answer :oracle:\nBecause of its enzymes.\n"
                  "** Oracle: llama3.2\nRye has more amylase.\n*** Details\nAmylase in detail.\n"
                  "** Oracle of Delphi\nMy own note on Delphi.\n"
                  "* Elsewhere\n** Oracle\nNot a conversation.\n")
          (org-mode)
          (transient-mark-mode 1)
          (goto-char (point-min))
          (search-forward (nth 0 case))
          (set-mark (match-beginning 0))
          (call-interactively #'arcology-oracle-memorize)
          (should (equal (list (nth 0 case) (alist-get 'role (car sent)))
                         (list (nth 0 case) (nth 1 case)))))))))

(ert-deftest arcology-oracle-memory-test-a-grounded-org-ai-reply-is-the-oracle-s ()
  "A region holding an [AI]: turn of an org-ai block whose :model is a grounded one is
sent with role oracle; its [ME]: turn alone, and a block with another model, are not."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (dolist (case '(("llama3.2+notes" "Rye ferments" "\\[AI\\]: Because" "oracle")
                      ;; Quoted, as Babel's header arguments may be (org-ai reads them so).
                      ("\"llama3.2+notes\" :temperature 0.7" "Rye ferments" "\\[AI\\]: Because" "oracle")
                      ("llama3.2+notes" "Rye ferments" "faster\\?" nil)
                      ("gpt-4o" "Rye ferments" "\\[AI\\]: Because" nil)))
        (with-temp-buffer
          (insert "* Chat\nMy notes.\n#+begin_ai :model " (nth 0 case) "\n[ME]: Why?\n\n"
                  "[AI]: Rye ferments faster.\n\n[ME]: Rye ferments faster?\n\n[AI]: Because.\n#+end_ai\n")
          (org-mode)
          (transient-mark-mode 1)
          (goto-char (point-max))
          (search-backward (nth 1 case))
          (set-mark (point))
          (re-search-forward (nth 2 case))
          (call-interactively #'arcology-oracle-memorize)
          (should (equal (alist-get 'role (car sent)) (nth 3 case))))))))

(ert-deftest arcology-oracle-memory-test-an-org-ai-block-only-shown-is-the-user-s ()
  "A #+begin_ai shown inside a source block (a note about org-ai's syntax), or never
closed by #+end_ai, is no org-ai block, as Org and the daemon read it: a region of it is
sent without a role."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (dolist (text '("* Setup\nMy notes.\n#+begin_src org\n#+begin_ai :model llama3.2+notes\n[ME]: Why?\n\n[AI]: Rye ferments faster.\n#+end_ai\n#+end_src\n"
                      "* Setup\nMy notes.\n#+begin_ai :model llama3.2+notes\n[ME]: Why?\n\n[AI]: Rye ferments faster.\n\nMy own text.\n"))
        (setq sent nil)
        (with-temp-buffer
          (insert text)
          (org-mode)
          (transient-mark-mode 1)
          (goto-char (point-min))
          (search-forward "Rye ferments")
          (set-mark (line-beginning-position))
          (goto-char (line-end-position))
          (call-interactively #'arcology-oracle-memorize)
          (should sent)
          (should-not (alist-get 'role (car sent))))))))

;; Review (newcomer's first day): C-c o M on a region of a heading tagged
;; :private: sent it, and the daily note it landed in made it searchable.
(ert-deftest arcology-oracle-memory-test-a-private-region-is-never-sent ()
  "A region that is, or reaches into, a private part of the note (a private or crypt
tag on its heading or one above, the file's #+filetags, ROAM_EXCLUDE) is refused and
nothing is sent; a region of public headings only is sent."
  (let (sent)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (ok _fail) (funcall ok "/roam")))
              ((symbol-function 'arcology-oracle--json)
               (lambda (_method _path &rest args) (push (plist-get args :json) sent) nil)))
      (dolist (case '(("* Thoughts :private:\nprivatepelican here.\n" "privatepelican" "here." t)
                      ("* Thoughts :private:\n** Deeper\nprivatepelican here.\n" "privatepelican" "here." t)
                      ("* Vault :crypt:\nprivatepelican here.\n" "privatepelican" "here." t)
                      ("* Out\n:PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\nprivatepelican here.\n" "privatepelican" "here." t)
                      ("#+filetags: :private:\n* Diary\nprivatepelican here.\n" "privatepelican" "here." t)
                      ;; From a public heading into a private one below it.
                      ("* Public\nRye ferments faster.\n* Thoughts :private:\nprivatepelican here.\n" "Rye" "here." t)
                      ("* Public\nRye ferments faster.\n* Thoughts :private:\nprivatepelican here.\n" "Rye" "faster." nil)))
        (setq sent nil)
        (with-temp-buffer
          (insert (nth 0 case))
          (org-mode)
          (transient-mark-mode 1)
          (goto-char (point-min))
          (search-forward (nth 1 case))
          (set-mark (match-beginning 0))
          (search-forward (nth 2 case))
          (if (nth 3 case)
              (progn
                (should-error (call-interactively #'arcology-oracle-memorize) :type 'user-error)
                (should-not sent))
            (call-interactively #'arcology-oracle-memorize)
            (should (equal (alist-get 'text (car sent)) "Rye ferments faster."))))))))

(ert-deftest arcology-oracle-memory-test-forget-the-capture-at-point-or-the-last ()
  "C-c o K forgets the captured heading at point, after asking, and the daily note shows
it gone; with no capture at point, the last one remembered; a note with unsaved edits,
or a heading the daemon did not capture, is refused with nothing sent."
  (arcology-oracle-memory-test--with-daemon
    (let* ((daily (arcology-oracle-memory-test--daily))
           (first (arcology-oracle-memory-test--memorize "The kiln shelf cracked at cone six" "Kiln shelf"))
           (second (arcology-oracle-memory-test--memorize "Order two new kiln posts" "Kiln posts"))
           (visiting (find-file-noselect daily))
           asked)
      (unwind-protect
          (cl-letf (((symbol-function 'yes-or-no-p) (lambda (prompt) (push prompt asked) t)))
            (with-current-buffer visiting
              (revert-buffer t t t)
              (goto-char (point-min))
              (search-forward "The kiln shelf cracked")
              (call-interactively #'arcology-oracle-forget)
              (should (string-match-p "Forget \"Kiln shelf\"" (car asked)))
              (arcology-oracle-test--wait
               (lambda () (not (save-excursion (goto-char (point-min)) (search-forward "kiln shelf cracked" nil t))))
               20 "the daily note's buffer without the capture")
              (should (search-forward "Order two new kiln posts" nil t)))
            ;; Elsewhere: the last one remembered.
            (with-temp-buffer
              (call-interactively #'arcology-oracle-forget)
              (should (string-match-p "Forget \"Kiln posts\"" (car asked))))
            (arcology-oracle-test--wait
             (lambda () (with-temp-buffer (insert-file-contents daily)
                                          (not (search-forward "new kiln posts" nil t))))
             20 "the second capture gone from the file")
            ;; The last one, its note open with unsaved edits (not in the capture): refused.
            (arcology-oracle-memory-test--memorize "Glaze the second batch" "Glaze")
            (setq asked nil)
            (with-current-buffer visiting
              (revert-buffer t t t)
              (goto-char (point-max))
              (insert "* Unsaved thoughts\n")
              (should (string-match-p "Save .* first" (cadr (should-error (arcology-oracle-forget) :type 'user-error))))
              (set-buffer-modified-p nil))
            (with-temp-buffer (insert-file-contents daily) (should (search-forward "Glaze the second batch" nil t)))
            ;; Unsaved edits, or a heading of the user's: refused, nothing asked.
            (with-temp-buffer
              (insert "* Mine\n:PROPERTIES:\n:ID: mine-1\n:CAPTURED_BY: arcology-oracle\n:END:\ntext\n")
              (org-mode)
              (should-error (arcology-oracle-forget) :type 'user-error))
            (with-temp-buffer
              (insert "* Mine\ntext\n")
              (org-mode)
              (setq arcology-oracle-last-memory nil)
              (should-error (arcology-oracle-forget) :type 'user-error))
            (should-not asked)
            (should first))
        (kill-buffer visiting)))))

;; The daemon's 409 carries `retry': its words say whether trying again can help.
(ert-deftest arcology-oracle-memory-test-a-refused-forget-says-whether-to-try-again ()
  "Refused because another Emacs holds the note: the message says to try again;
refused because the capture was edited: it offers no retry."
  (arcology-oracle-memory-test--with-daemon
    (let* ((daily (arcology-oracle-memory-test--daily))
           (lock (expand-file-name (concat ".#" (file-name-nondirectory daily)) (file-name-directory daily)))
           said)
      (cl-letf (((symbol-function 'yes-or-no-p) #'always)
                ((symbol-function 'arcology-oracle--report) (lambda (text &rest _) (setq said text))))
        (arcology-oracle-memory-test--memorize "The clay bucket needs a lid" "Clay bucket")
        (make-symbolic-link "someone@another-host.4242:1" lock)
        (unwind-protect
            (progn
              (arcology-oracle-forget)
              (arcology-oracle-test--wait (lambda () said) 20 "the refusal")
              (message "refused, retry true: %s" said)
              ;; The daemon's words say to try again: said once, with the command.
              (should (string-match-p "\\`Nothing forgotten yet: daily/" said))
              (should (string-match-p "save it and try again with M-x arcology-oracle-forget (HTTP 409)\\'" said))
              (should (= 2 (length (split-string said "\\<again\\>")))))
          (delete-file lock))
        (setq said nil)
        (with-temp-file daily
          (insert-file-contents daily)
          (goto-char (point-min))
          (search-forward "The clay bucket needs a lid")
          (insert " and a handle"))
        (arcology-oracle-forget)
        (arcology-oracle-test--wait (lambda () said) 20 "the refusal")
        (message "refused, retry false: %s" said)
        (should (string-match-p "\\`Nothing forgotten, and trying again will not change that: " said))
        ;; The daemon's words whole: why, and what to do instead.
        (should (string-match-p "it is yours now: edit it in Emacs (HTTP 409)\\'" said))
        (should-not (string-match-p "tries again" said))))))

;; Emacs without lock files: the forget names the notes with unsaved edits,
;; as a capture does, and the daemon removes nothing from one of them.
(ert-deftest arcology-oracle-memory-test-forget-sends-the-unsaved-notes ()
  "A capture whose note is open unsaved under another name of it (a hard link,
visited in a buffer of its own) is not forgotten: the daemon refuses, to be
tried again once saved, and the note keeps every byte.  Saved, it goes."
  (arcology-oracle-memory-test--with-daemon
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (daily (arcology-oracle-memory-test--daily))
           ;; In a hidden folder the daemon does not index (no second note holding the ID).
           (other (expand-file-name ".by-another-name/today.org" roam))
           (create-lockfiles nil)
           (find-file-existing-other-name nil)
           (bytes (lambda (file) (with-temp-buffer
                                   (set-buffer-multibyte nil)
                                   (insert-file-contents-literally file)
                                   (buffer-string))))
           (answer (progn (make-directory (file-name-directory daily) t)
                          (unless (file-exists-p daily) (write-region "#+title: today\n" nil daily))
                          (arcology-oracle-memory-test--memorize "Sweep the chimney before the frost" "Chimney")))
           (visiting (find-file-noselect daily))
           (other-buffer (progn (make-directory (file-name-directory other) t)
                                (add-name-to-file daily other t)
                                (find-file-noselect other t)))
           said before)
      (should (equal (alist-get 'file answer) (file-relative-name daily roam)))
      (should-not (eq visiting other-buffer))
      (unwind-protect
          (cl-letf (((symbol-function 'yes-or-no-p) #'always)
                    ((symbol-function 'arcology-oracle--report) (lambda (text &rest _) (setq said text))))
            (with-current-buffer other-buffer
              (goto-char (point-min))
              (insert "typed, never saved\n"))
            (setq before (funcall bytes daily))
            (with-current-buffer visiting
              (revert-buffer t t t)
              (goto-char (point-min))
              (search-forward "Sweep the chimney")
              (arcology-oracle-forget))
            (arcology-oracle-test--wait (lambda () said) 20 "the refusal")
            (message "refused while unsaved elsewhere: %s" said)
            (should (string-match-p "\\`Nothing forgotten yet: " said))
            (should (string-match-p "try again with M-x arcology-oracle-forget" said))
            (should (string-match-p (concat (regexp-quote (file-relative-name daily roam))
                                            " has unsaved edits in the editor")
                                    said))
            (should (equal (funcall bytes daily) before))
            ;; Saved (its edits undone): forgotten.
            (with-current-buffer other-buffer (set-buffer-modified-p nil))
            (setq said nil)
            (with-current-buffer visiting
              (goto-char (point-min))
              (search-forward "Sweep the chimney")
              (arcology-oracle-forget))
            (arcology-oracle-test--wait
             (lambda () (not (string-match-p "Sweep the chimney" (funcall bytes daily))))
             20 "the capture gone from the file")
            (should-not said))
        (dolist (buffer (list visiting other-buffer))
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer))
        (delete-directory (file-name-directory other) t)))))

(ert-deftest arcology-oracle-memory-test-a-refused-capture-says-whether-to-try-again ()
  "Refused because Emacs holds both the daily and the inbox: sending again can work,
said once; refused because the daily is read-only: it will not, and no retry is offered.
The text is on the kill ring either way."
  (arcology-oracle-memory-test--with-daemon
    (let* ((daily (arcology-oracle-memory-test--daily))
           (inbox (expand-file-name "inbox.org" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
           (locks (mapcar (lambda (f) (expand-file-name (concat ".#" (file-name-nondirectory f))
                                                        (file-name-directory f)))
                          (list daily inbox)))
           (arcology-oracle-last-memory nil)
           (kill-ring nil)
           said)
      (make-directory (file-name-directory daily) t)
      (unless (file-exists-p daily) (write-region "#+title: today\n" nil daily))
      (cl-letf (((symbol-function 'arcology-oracle--report) (lambda (text &rest _) (setq said text))))
        (dolist (lock locks) (make-symbolic-link "someone@another-host.4242:1" lock t))
        (unwind-protect
            (progn
              (arcology-oracle-memorize "Oil the hinges of the bread box")
              (arcology-oracle-test--wait (lambda () said) 20 "the refusal"))
          (mapc #'delete-file locks))
        (message "refused, retry true: %s" said)
        (should (string-match-p "\\`Nothing remembered yet: both today's daily note" said))
        (should (string-match-p "save one and try again with M-x arcology-oracle-memorize (HTTP 409); your text is on the kill ring" said))
        (should (= 2 (length (split-string said "\\<again\\>"))))
        (should (equal (car kill-ring) "Oil the hinges of the bread box"))
        (setq said nil)
        (set-file-modes daily #o444)
        (unwind-protect
            (progn
              (arcology-oracle-memorize "Oil the hinges of the bread box")
              (arcology-oracle-test--wait (lambda () said) 20 "the refusal"))
          (set-file-modes daily #o644))
        (message "refused, retry false: %s" said)
        (should (string-match-p "\\`Nothing remembered, and trying again will not change that: daily/.* is read-only" said))
        (should-not (string-match-p "tries again\\|try again" said))
        (should-not arcology-oracle-last-memory)))))

(ert-deftest arcology-oracle-memory-test-a-note-forgotten-whole-leaves-no-buffer ()
  "When a forget removed the whole note (the daemon had made it for that capture), its
buffer is killed rather than reverted (which signalled that the file is gone)."
  (let* ((dir (make-temp-file "roam" t))
         (file (expand-file-name "daily.org" dir))
         (buffer (progn (write-region "* Captured\n" nil file) (find-file-noselect file))))
    (unwind-protect
        (progn
          (delete-file file)
          (should (eq (arcology-oracle--memory-revert dir "daily.org") 'killed))
          (should-not (buffer-live-p buffer))
          ;; Reverted only when a buffer visits it: only then can undo bring lines back.
          (write-region "* Other\n" nil file)
          (should-not (arcology-oracle--memory-revert dir "daily.org"))
          (setq buffer (find-file-noselect file))
          (should (eq (arcology-oracle--memory-revert dir "daily.org") 'reverted)))
      (when (buffer-live-p buffer) (kill-buffer buffer))
      (delete-directory dir t))))

(ert-deftest arcology-oracle-memory-test-memorize-region ()
  "The region is remembered, searchable at once; a clean visiting buffer is reverted."
  (arcology-oracle-memory-test--with-daemon
    (let* ((daily (arcology-oracle-memory-test--daily))
           (visiting (progn (make-directory (file-name-directory daily) t)
                            (unless (file-exists-p daily) (write-region "#+title: today\n" nil daily))
                            (find-file-noselect daily))))
      (unwind-protect
          (with-temp-buffer
            (insert "before\nThe lamplighter walks the harbour wall at dusk\nafter\n")
            (transient-mark-mode 1)
            (goto-char (point-min))
            (forward-line 1)
            (set-mark (point))
            (end-of-line)
            (let (answer)
              (cl-letf (((symbol-function 'read-string)
                         (lambda (&rest _) (ert-fail "read-string called with an active region"))))
                (let ((arcology-oracle-memorize-tags '("harbour")))
                  (call-interactively #'arcology-oracle-memorize)))
              (setq answer (arcology-oracle-test--wait
                            (lambda () (and arcology-oracle-last-memory
                                            (string-match-p "lamplighter" (alist-get 'link arcology-oracle-last-memory))
                                            arcology-oracle-last-memory))))
              (should (equal (alist-get 'file answer) (format-time-string "daily/%Y-%m-%d.org")))
              (should (member (alist-get 'id answer) (arcology-oracle-memory-test--search "lamplighter harbour")))
              (with-temp-buffer
                (insert-file-contents daily)
                (should (search-forward "* The lamplighter walks the harbour wall at dusk :harbour:" nil t)))
              (arcology-oracle-test--wait
               (lambda () (with-current-buffer visiting
                            (save-excursion (goto-char (point-min)) (search-forward "lamplighter" nil t))))
               10 "the visiting buffer to be reverted")))
        (kill-buffer visiting)))))

(ert-deftest arcology-oracle-memory-test-memorize-prompt-and-locked-daily ()
  "Without a region the text is read; unsaved edits of the daily send it to the inbox."
  (arcology-oracle-memory-test--with-daemon
    (let* ((daily (arcology-oracle-memory-test--daily))
           (buffer (progn (make-directory (file-name-directory daily) t)
                          (unless (file-exists-p daily) (write-region "#+title: today\n" nil daily))
                          (find-file-noselect daily)))
           (create-lockfiles t))
      (unwind-protect
          (progn
            (setq arcology-oracle-last-memory nil)
            (with-temp-buffer
              (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "Buy stamps for the quince jam labels")))
                (call-interactively #'arcology-oracle-memorize)))
            (arcology-oracle-test--wait (lambda () arcology-oracle-last-memory))
            (should (equal (alist-get 'file arcology-oracle-last-memory)
                           (format-time-string "daily/%Y-%m-%d.org")))
            ;; The clean buffer visiting the daily is reverted to show the capture.
            (arcology-oracle-test--wait
             (lambda () (with-current-buffer buffer
                          (save-excursion (goto-char (point-min)) (search-forward "quince jam labels" nil t))))
             10 "the daily's buffer to be reverted")
            ;; An unsaved edit makes Emacs lock the file (.#NAME): the daemon writes
            ;; to the inbox instead and the answer says so.
            (with-current-buffer buffer
              (goto-char (point-max))
              (insert "\n* typing in progress\n"))
            (should (file-symlink-p (expand-file-name (concat ".#" (file-name-nondirectory daily))
                                                      (file-name-directory daily))))
            (let ((answer (arcology-oracle-memory-test--memorize "Quince jam: add lemon peel")))
              (should (equal (alist-get 'file answer) "inbox.org"))
              (should (eq (alist-get 'inbox answer) t)))
            (with-current-buffer buffer
              (should (buffer-modified-p))
              (should (save-excursion (goto-char (point-min)) (search-forward "typing in progress" nil t)))))
        (with-current-buffer buffer (set-buffer-modified-p nil))
        (kill-buffer buffer)))))

;; The daemon's refusal itself (every byte of the notes, the database and
;; the fake Ollama) is in tests/index/test_memory_private_places.py; here,
;; that Emacs sends where the region came from and shows the refusal.
(ert-deftest arcology-oracle-memory-test-a-region-private-by-the-daemon-s-rule-is-refused ()
  "C-c o M on a region private by the daemon's rule, not by Emacs's.
Emacs's `arcology-oracle-private-tags' lacks the daemon's tag, so Emacs
sends the region with its file and line (no line for an unsaved
buffer); the daemon refuses it, the echo area says so without
repeating the text, and nothing is written."
  (arcology-oracle-memory-test--with-daemon
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (notes (list (arcology-oracle-memory-test--daily) (expand-file-name "inbox.org" roam)))
           (bytes (lambda () (mapcar (lambda (f) (and (file-exists-p f)
                                                      (with-temp-buffer
                                                        (set-buffer-multibyte nil)
                                                        (insert-file-contents-literally f)
                                                        (buffer-string))))
                                     notes)))
           (before (funcall bytes))
           (arcology-oracle-private-tags '("secret"))
           (arcology-oracle-last-memory nil)
           (create-lockfiles nil)
           (kill-ring nil)
           (buffer (find-file-noselect (expand-file-name "journal/2024-03-01.org" roam))))
      (push buffer arcology-oracle-test--buffers)
      (dolist (case '((nil "journal/2024-03-01\\.org is private at line 21")
                      (t "this text holds lines journal/2024-03-01\\.org holds only in its private parts")))
        (setq arcology-oracle--last-report nil)
        (with-current-buffer buffer
          (when (car case)  ; unsaved edits above: the buffer's lines are not the file's
            (goto-char (point-min))
            (insert "\n"))
          (transient-mark-mode 1)
          (goto-char (point-min))
          (search-forward "Still privatepelican")
          (set-mark (line-beginning-position))
          (end-of-line)
          (should-not (arcology-oracle--private-between-p (region-beginning) (region-end)))
          (call-interactively (lookup-key arcology-oracle-command-map (kbd "M"))))
        (arcology-oracle-test--wait (lambda () (car arcology-oracle--last-report)) 20 "the daemon's refusal")
        (let ((shown (car arcology-oracle--last-report)))
          (should (string-match-p (cadr case) shown))
          (should (string-match-p "(HTTP 400); nothing was remembered" shown))
          (should-not (string-match-p "privatepelican" shown)))
        (should-not arcology-oracle-last-memory)
        (should (equal (funcall bytes) before))))))

;; The daemon's own answer for a left-out folder (exclude_globs) is in
;; tests/index/test_memory_left_out.py; here, that Emacs shows its note.
(ert-deftest arcology-oracle-memory-test-the-answer-s-note-is-shown ()
  "A capture the daemon wrote where its index never reads says so in the echo area."
  (let ((answer '((ok . t) (id . "c-1") (file . "journals/2026-03-14.org") (line . 5)
                  (title . "Kept") (link . "[[id:c-1][Kept]]") (inbox) (indexed)
                  (note . "journals/2026-03-14.org is left out of the index (exclude_globs): written there, never indexed, so never recalled; forgetting it by its ID takes it back")))
        shown)
    (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) (lambda (_ok _fail) nil))
              ((symbol-function 'message) (lambda (format &rest args) (setq shown (apply #'format format args))))
              ((symbol-function 'kill-new) #'ignore))
      (arcology-oracle--memorized answer)
      (should (string-match-p "\\`Remembered in journals/2026-03-14\\.org:5: \"Kept\" (its link is copied: " shown))
      ;; The link goes on the kill ring, not into the echo area: a raw
      ;; [[id:...][...]] took two lines of it.
      (should-not (string-match-p "id:c-1" shown))
      (should (string-match-p "(journals/2026-03-14\\.org is left out of the index (exclude_globs): .*never recalled" shown))
      (arcology-oracle--memorized (cons '(note) answer))
      (should-not (string-match-p "left out" shown)))))

;; Emacs without lock files (`create-lockfiles' nil, or
;; `lock-file-name-transforms' putting them elsewhere) leaves the daemon
;; nothing to see: the request names the notes with unsaved edits.
(ert-deftest arcology-oracle-memory-test-memorize-unsaved-without-lock-files ()
  "Without lock files, unsaved edits of the daily still send the note to the inbox.
With the inbox unsaved too, nothing is written and the text is on the kill ring."
  (arcology-oracle-memory-test--with-daemon
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (daily (arcology-oracle-memory-test--daily))
           (inbox (expand-file-name "inbox.org" roam))
           (create-lockfiles nil)
           (daily-buffer (progn (make-directory (file-name-directory daily) t)
                                (unless (file-exists-p daily) (write-region "#+title: today\n" nil daily))
                                (unless (file-exists-p inbox) (write-region "#+title: Inbox\n" nil inbox))
                                (find-file-noselect daily)))
           (inbox-buffer (find-file-noselect inbox))
           (bytes (lambda (file) (with-temp-buffer
                                   (set-buffer-multibyte nil)
                                   (insert-file-contents-literally file)
                                   (buffer-string)))))
      (unwind-protect
          (let (daily-before inbox-before)
            (with-current-buffer daily-buffer
              (goto-char (point-max))
              (insert "\n* typing, never saved\n"))
            (should-not (file-symlink-p (expand-file-name (concat ".#" (file-name-nondirectory daily))
                                                          (file-name-directory daily))))
            (setq daily-before (funcall bytes daily))
            (let ((answer (arcology-oracle-memory-test--memorize "Descale the kettle on Sunday")))
              (should (equal (alist-get 'file answer) "inbox.org"))
              (should (eq (alist-get 'inbox answer) t)))
            (should (equal (funcall bytes daily) daily-before))
            (with-current-buffer daily-buffer (should (buffer-modified-p)))
            ;; The inbox unsaved as well: refused, nothing written, nothing lost.
            (with-current-buffer inbox-buffer
              (revert-buffer t t t)
              (goto-char (point-max))
              (insert "\n* also typing\n"))
            (setq inbox-before (funcall bytes inbox))
            (with-temp-buffer (arcology-oracle-memorize "Oil the garden gate hinges"))
            (arcology-oracle-test--wait (lambda () (car arcology-oracle--last-report)) 20 "the refusal")
            (should (string-match-p "unsaved edits" (car arcology-oracle--last-report)))
            (should (equal (current-kill 0 t) "Oil the garden gate hinges"))
            (should (equal (funcall bytes daily) daily-before))
            (should (equal (funcall bytes inbox) inbox-before)))
        (dolist (buffer (list daily-buffer inbox-buffer))
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer))))))

(defun arcology-oracle-memory-test--result (path query id)
  "Return the result for heading ID of the daemon's PATH (/search, /similar) for QUERY.
Asked again until it is there: /similar finds a capture once it is embedded."
  (let (found)
    (arcology-oracle-test--wait
     (lambda ()
       (let (answer)
         (if (equal path "/search")
             (arcology-oracle--json "GET" path :query `(("q" ,query) ("k" 50))
                                    :callback (lambda (a) (setq answer a)) :errback (lambda (m) (setq answer m)))
           (arcology-oracle--json "POST" path :json `((text . ,query) (k . 50) (all . t))
                                  :callback (lambda (a) (setq answer a)) :errback (lambda (m) (setq answer m))))
         (arcology-oracle-test--wait (lambda () answer))
         (when (stringp answer) (ert-fail answer))
         (setq found (cl-find id (alist-get 'results answer)
                              :key (lambda (r) (alist-get 'heading_id r)) :test #'equal))))
     20 (format "%s to find %s" path id))
    found))

(ert-deftest arcology-oracle-memory-test-captured-keyword-line-snippet ()
  "A remembered #+ line is shown as written: without the comma that keeps it text.
The heading's title is the note's title it names; the snippet, the
line as written."
  (arcology-oracle-memory-test--with-daemon
    (let* ((alone (arcology-oracle-memory-test--memorize "#+title: Zephyrine Sourdough Baking"))
           (more (arcology-oracle-memory-test--memorize "#+title: Quorvane Loaves\nFeed the quorvane starter."
                                                        "Quorvane loaves")))
      (should (equal (alist-get 'title alone) "Zephyrine Sourdough Baking"))
      (dolist (path '("/search" "/similar"))
        (let ((result (arcology-oracle-memory-test--result path "Zephyrine Sourdough" (alist-get 'id alone))))
          (should-not (string-match-p "," (alist-get 'snippet result)))
          (should (equal (arcology-oracle--snippet result) "#+title: Zephyrine Sourdough Baking")))
        (should (equal (arcology-oracle--snippet
                        (arcology-oracle-memory-test--result path "quorvane starter" (alist-get 'id more)))
                       "#+title: Quorvane Loaves Feed the quorvane starter."))))))

(ert-deftest arcology-oracle-memory-test-make-private ()
  "The heading at point gets the first private tag; saved, it leaves the index."
  (arcology-oracle-memory-test--with-daemon
    (let* ((answer (arcology-oracle-memory-test--memorize "The cormorant roost count was forty" nil '("birds")))
           (id (alist-get 'id answer))
           (file (expand-file-name (alist-get 'file answer) (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
           (buffer (find-file-noselect file))
           (arcology-oracle-private-tags '("secret" "private")))
      (unwind-protect
          (with-current-buffer buffer
            (should (member id (arcology-oracle-memory-test--search "cormorant roost")))
            (goto-char (point-min))
            (search-forward "The cormorant roost count was forty" nil t)
            (forward-line 1)                ; in the drawer: the heading above is the one
            (arcology-oracle-make-private)
            (should (equal (org-get-tags nil t) '("birds" "secret")))
            (let ((arcology-oracle-private-tags nil))
              (should-error (arcology-oracle-make-private) :type 'user-error))
            ;; The daemon's private_tags hold "private" only: tag that, then save.
            (let ((arcology-oracle-private-tags '("private")))
              (arcology-oracle-make-private))
            (should (equal (org-get-tags nil t) '("birds" "secret" "private")))
            (save-buffer)
            (arcology-oracle-test--wait
             (lambda () (not (member id (arcology-oracle-memory-test--search "cormorant roost"))))
             20 "the private heading to leave the index"))
        (with-current-buffer buffer (set-buffer-modified-p nil))
        (kill-buffer buffer)))))

(ert-deftest arcology-oracle-memory-test-make-private-on-a-heading-already-private ()
  "C-c o P on a heading already private (its own tag in another letter case, crypt, a
heading above it, the file's #+filetags) changes nothing and says so.  It said
\"Tagged :private:\" and rewrote the heading line: \"* H :PRIVATE:\" became
\"* H  ...  :PRIVATE:private:\", the tags realigned."
  (let ((arcology-oracle-private-tags '("private")))
    (dolist (text '("* H :PRIVATE:\nx\n" "* H :crypt:\nx\n" "* P :private:\n** H\nx\n"
                    "#+filetags: :private:\n* H\nx\n" "* H\n:PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\nx\n"))
      (with-temp-buffer
        (insert text)
        (org-mode)
        (goto-char (point-max))
        (arcology-oracle-test--capturing-messages messages
          (arcology-oracle-make-private)
          (should (string-match-p "already private" (car messages))))
        (should (equal (buffer-string) text))))))

(ert-deftest arcology-oracle-memory-test-make-private-in-a-buffer-without-a-file ()
  "C-c o P in an Org buffer without a file tags the heading (or the file) and says
what is true: nothing of it is sent, and there is no file to save.  It said \"save
the file to take the heading out of the index\", of a buffer the daemon never read."
  (let ((arcology-oracle-private-tags '("private")))
    (with-temp-buffer
      (insert "#+title: Scratch\n* H\nx\n")
      (org-mode)
      (goto-char (point-max))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-make-private)
        (should (equal (car messages)
                       "Tagged :private:; Emacs sends nothing of the heading \
(this buffer has no file: the daemon never read it)")))
      (should (equal (org-get-tags nil t) '("private")))
      (goto-char (point-min))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-make-private)
        (should (string-match-p "Emacs sends nothing of the whole file (this buffer has no file"
                                (car messages))))
      (should (string-prefix-p "#+title: Scratch\n#+filetags: :private:\n* H" (buffer-string))))))

(ert-deftest arcology-oracle-memory-test-make-private-needs-org ()
  "Outside Org the command refuses."
  (with-temp-buffer
    (should-error (arcology-oracle-make-private) :type 'user-error)))

(ert-deftest arcology-oracle-memory-test-make-private-in-a-read-only-buffer ()
  "In the answers buffer, or a note made read-only, nothing is tagged and the
message names the buffer (it was Org's \"org-toggle-tag: Buffer is read-only:
#<buffer *arcology-oracle answers*>\")."
  (with-temp-buffer
    (rename-buffer "*arcology-oracle answers*" t)
    (org-mode)
    (insert "* How often do I feed the starter?\nAnswer text.\n")
    (goto-char (point-max))
    (setq buffer-read-only t)
    (let ((err (should-error (arcology-oracle-make-private) :type 'user-error)))
      (should (equal (cadr err) (format "Buffer %s is not a note: nothing was tagged" (buffer-name)))))
    (goto-char (point-min))
    (should (equal (buffer-string) "* How often do I feed the starter?\nAnswer text.\n"))
    ;; A note visiting a file, read-only (C-x C-q): the key to make it editable.
    (setq buffer-file-name (expand-file-name "note.org" temporary-file-directory))
    (unwind-protect
        (let ((err (should-error (arcology-oracle-make-private) :type 'user-error)))
          (should (string-match-p "is read-only (C-x C-q makes it editable): nothing was tagged"
                                  (cadr err))))
      (setq buffer-file-name nil))
    (should (equal (buffer-string) "* How often do I feed the starter?\nAnswer text.\n"))))

(provide 'arcology-oracle-memory-test)

;;; arcology-oracle-memory-test.el ends here
