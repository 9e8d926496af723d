;;; arcology-oracle-links-test.el --- ERT tests of link insertion and suggestions -*- lexical-binding: t -*-

;;; Commentary:

;; Against the real daemon and a fake Ollama, as arcology-oracle-test.el
;; (whose fixtures these tests use): `i' and `w' in the similar notes
;; buffer, the link suggestions buffer, undo, and a daemon that is down.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-test-support)
(require 'arcology-oracle-test)

(defvar org-roam-db-location)
(defvar org-roam-directory)
(declare-function org-roam-db-query "org-roam-db" (sql &rest args))

(defconst arcology-oracle-links-test--note-id "3333cccc-0000-4000-8000-000000000001"
  "ID of the scratch note the tests write links into.")

(defun arcology-oracle-links-test--scratch-note (dir)
  "Write a note about bread dough into DIR, with a copy of Bread Hydration; return its file."
  (make-directory dir t)
  (copy-file (expand-file-name "bread-hydration.org" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
             (expand-file-name "bread-hydration.org" dir) t)
  (let ((file (expand-file-name "dough-log.org" dir)))
    (with-temp-file file
      (insert ":PROPERTIES:\n:ID: " arcology-oracle-links-test--note-id "\n:END:\n"
              "#+title: Dough log\n\n"
              "Bread dough hydration: water divided by flour, baker's percentages\n"
              "and how wet dough handles.\n\n"
              "A second paragraph about the oven.\n"))
    file))

(defun arcology-oracle-links-test--similar-entry (title)
  "Move point in the similar buffer to the entry titled TITLE, waiting for it."
  (arcology-oracle-test--wait (lambda () (assoc title (arcology-oracle-test--listed)))
                              20 (format "%s in the similar buffer" title))
  (set-buffer arcology-oracle-similar-buffer-name)
  (goto-char (point-min))
  (search-forward title)
  (beginning-of-line))

(defun arcology-oracle-links-test--undo (buffer)
  "Undo once in BUFFER, as the `undo' command does."
  (with-current-buffer buffer
    (let ((last-command nil))
      (undo))))

(ert-deftest arcology-oracle-links-test-insert-from-similar-is-an-org-roam-link ()
  "`i' in the similar buffer writes a link org-roam records; one undo removes it; `w' copies it."
  (require 'org-roam)
  (arcology-oracle-test--with-daemon
    (let* ((dir (expand-file-name "roam-links" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))
           (file (arcology-oracle-links-test--scratch-note dir))
           (hydration (arcology-oracle-test--id 'hydration))
           (link (format "[[id:%s][Bread Hydration]]" hydration))
           (org-roam-directory dir)
           (org-roam-db-location (expand-file-name (format "org-roam-links-%d.db" (emacs-pid)) dir))
           (inhibit-message t)
           (source (find-file-noselect file)))
      (push source arcology-oracle-test--buffers)
      (switch-to-buffer source)
      (search-forward "how wet dough handles")
      (let ((before (buffer-string))
            (at (point)))
        (arcology-oracle-similar-show)
        (arcology-oracle-links-test--similar-entry "Bread Hydration")
        ;; w copies the link.
        (call-interactively (key-binding (kbd "w")))
        (should (equal (current-kill 0) link))
        ;; i writes it at point in the note, a space after the word before,
        ;; when so configured.
        (let ((arcology-oracle-insert-link-at 'point))
          (call-interactively (key-binding (kbd "i"))))
        (with-current-buffer source
          (should (equal (buffer-substring at (+ at 1 (length link))) (concat " " link)))
          (arcology-oracle-links-test--undo source)
          (should (equal (buffer-string) before)))
        ;; At the end of the paragraph, by default.
        (with-current-buffer source
          (goto-char (point-min))
          (search-forward "Bread dough")
          (set-window-point (get-buffer-window source) (point)))
        (call-interactively (key-binding (kbd "i")))
        (with-current-buffer source
          (goto-char (point-min))
          (should (search-forward (concat "how wet dough handles. " link "\n\nA second") nil t))
          (save-buffer))
        (unwind-protect
            (progn
              (arcology-oracle-test--roam-db-sync)
              (should (equal (org-roam-db-query [:select [source dest type] :from links
                                                 :where (= source $s1)]
                                                arcology-oracle-links-test--note-id)
                             `((,arcology-oracle-links-test--note-id ,hydration "id")))))
          (arcology-oracle-test--roam-db-close))))))

(defun arcology-oracle-links-test--suggestions ()
  "Return the suggestions listed in the links buffer, in order."
  (with-current-buffer arcology-oracle-links-buffer-name
    (let ((pos (point-min)) out)
      (while (setq pos (next-single-property-change pos 'arcology-oracle-entry))
        (when (get-text-property pos 'arcology-oracle-entry)
          (push (get-text-property pos 'arcology-oracle-result) out)))
      (nreverse out))))

(defun arcology-oracle-links-test--suggest ()
  "Ask for the suggestions here; wait until their buffer is shown, and enter it.
The first time against a daemon, it is asked where its notes are
first, so the buffer comes from a process sentinel."
  (arcology-oracle-suggest-links)
  (arcology-oracle-test--wait
   (lambda () (eq (window-buffer (selected-window)) (get-buffer arcology-oracle-links-buffer-name)))
   20 "the suggestions buffer")
  (set-buffer (window-buffer (selected-window))))

(ert-deftest arcology-oracle-links-test-suggestions-insert-at-their-paragraph ()
  "The suggestions buffer inserts a link at the end of its paragraph; one undo removes it; x rejects."
  (arcology-oracle-test--with-daemon
    (unwind-protect
        (let* ((source (arcology-oracle-test--visit "sourdough-baking.org"))
               (before (buffer-string)))
          (goto-char (point-min))
          (arcology-oracle-links-test--suggest)
          (should (eq (current-buffer) (get-buffer arcology-oracle-links-buffer-name)))
          (arcology-oracle-test--wait (lambda () (arcology-oracle-links-test--suggestions))
                                      20 "link suggestions")
          (let* ((first (car (arcology-oracle-links-test--suggestions)))
                 (paragraph (alist-get 'paragraph first))
                 (end-line (alist-get 'end_line paragraph))
                 (link (format "[[id:%s][%s]]" (alist-get 'node_id first) (alist-get 'title first))))
            (should paragraph)
            ;; Never a node already linked, nor the note itself.
            (should-not (member (alist-get 'node_id first)
                                (list (arcology-oracle-test--id 'sourdough) (arcology-oracle-test--id 'hydration))))
            (goto-char (point-min))
            (search-forward (alist-get 'title first))
            (call-interactively (key-binding (kbd "i")))
            (with-current-buffer source
              ;; Shown: point is at the link, at the end of the paragraph's last line.
              (should (= (line-number-at-pos) end-line))
              (goto-char (point-min))
              (forward-line (1- end-line))
              (should (string-suffix-p (concat " " link)
                                       (buffer-substring (line-beginning-position) (line-end-position))))
              (should (equal (car (last (split-string (alist-get 'text paragraph) "\n")))
                             (string-remove-suffix (concat " " link)
                                                   (buffer-substring (line-beginning-position) (line-end-position))))))
            (should-not (member first (arcology-oracle-links-test--suggestions)))
            (arcology-oracle-links-test--undo source)
            (with-current-buffer source (should (equal (buffer-string) before))))
          ;; x rejects the next one: gone from the list and remembered by the daemon.
          (let ((second (car (arcology-oracle-links-test--suggestions)))
                rejections)
            (set-buffer arcology-oracle-links-buffer-name)
            (goto-char (point-min))
            (search-forward (alist-get 'title second))
            (call-interactively (key-binding (kbd "x")))
            (arcology-oracle-test--wait
             (lambda () (not (member second (arcology-oracle-links-test--suggestions))))
             20 "the rejected suggestion to go")
            (arcology-oracle--json "GET" "/suggest-links/rejections"
                                   :callback (lambda (a) (setq rejections a)))
            (arcology-oracle-test--wait (lambda () rejections))
            (should (equal (mapcar (lambda (r) (alist-get 'to r)) (alist-get 'rejections rejections))
                           (list (alist-get 'node_id second))))))
      (let (done)
        (arcology-oracle--json "DELETE" "/suggest-links/rejections" :callback (lambda (_) (setq done t)))
        (arcology-oracle-test--wait (lambda () done)))
      (when (get-buffer arcology-oracle-links-buffer-name)
        (kill-buffer arcology-oracle-links-buffer-name)))))

(defun arcology-oracle-links-test--ask (rel heading)
  "Visit REL, put point in HEADING's body (nil: the file's) and ask for suggestions.
Return the note's buffer once the suggestions have arrived."
  (let ((source (arcology-oracle-test--visit rel)))
    (if heading
        (progn (arcology-oracle-test--goto-heading heading) (forward-line 1))
      (goto-char (point-min)))
    (arcology-oracle-links-test--suggest)
    (arcology-oracle-test--wait
     (lambda () (with-current-buffer arcology-oracle-links-buffer-name
                  (not (string-match-p "Looking for" (buffer-string)))))
     20 "link suggestions")
    source))

(defun arcology-oracle-links-test--select (suggestion)
  "Move point in the suggestions buffer to SUGGESTION's entry."
  (set-buffer arcology-oracle-links-buffer-name)
  (goto-char (text-property-any (point-min) (point-max) 'arcology-oracle-result suggestion)))

(defmacro arcology-oracle-links-test--with-links (&rest body)
  "Run BODY against the daemon; kill the suggestions buffer after."
  (declare (indent 0) (debug t))
  `(arcology-oracle-test--with-daemon
     (unwind-protect (progn ,@body)
       (when (get-buffer arcology-oracle-links-buffer-name)
         (kill-buffer arcology-oracle-links-buffer-name)))))

(ert-deftest arcology-oracle-links-test-never-the-note-itself ()
  "The list is about the node whose ID is sent, and never offers a node enclosing it.
`i' on such a suggestion all the same refuses to link the note to itself."
  (arcology-oracle-links-test--with-links
    (let* ((hydration (arcology-oracle-test--id 'hydration))
           (source (arcology-oracle-links-test--ask "bread-hydration.org" "Baker's percentages"))
           (before (with-current-buffer source (buffer-string)))
           (own-suggestion
            `(((node_id . ,hydration) (title . "Bread Hydration") (score . 0.9)
               (heading (heading . "Baker's percentages") (line . 12))
               (paragraph (start_line . 16) (end_line . 17)
                          (text . ,(concat "Every ingredient is a percentage of the total flour weight,"
                                           " so a formula scales\nto any batch size.")))))))
      (with-current-buffer arcology-oracle-links-buffer-name
        (should (string-prefix-p "Links to add to: Baker's percentages\n" (buffer-string))))
      (should-not (member hydration (mapcar (lambda (s) (alist-get 'node_id s))
                                            (arcology-oracle-links-test--suggestions))))
      ;; A heading without an ID: the suggestions are the file node's, and say so.
      (arcology-oracle-links-test--ask "bread-hydration.org" "High hydration doughs")
      (with-current-buffer arcology-oracle-links-buffer-name
        (should (string-prefix-p "Links to add to: Bread Hydration\n" (buffer-string)))
        (should (equal arcology-oracle--links-node hydration)))
      ;; The daemon's list, were it to offer the file's node: it is left out.
      (with-current-buffer arcology-oracle-links-buffer-name
        (should (member hydration arcology-oracle--links-own))
        (arcology-oracle--links-render source hydration "Bread Hydration" own-suggestion)
        (should-not (arcology-oracle-links-test--suggestions))
        ;; Offered all the same (an older list, say), a link to the file is refused.
        (setq arcology-oracle--links-own nil)
        (arcology-oracle--links-render source hydration "Bread Hydration" own-suggestion)
        (should (arcology-oracle-links-test--suggestions)))
      (arcology-oracle-links-test--select (car (arcology-oracle-links-test--suggestions)))
      (should (equal (cadr (should-error (call-interactively (key-binding (kbd "i"))) :type 'user-error))
                     "That is the note you are in: no link to itself"))
      (with-current-buffer source (should (equal (buffer-string) before))))))

;; The three lists of the package: the similar notes, the link suggestions, the rejections.
(defun arcology-oracle-links-test--on-first-entry (buffer)
  "Assert that BUFFER's point, and its windows', are on its first entry.
And that it does not look modified: it is a list, not a file."
  (with-current-buffer buffer
    (let ((first (next-single-property-change (point-min) 'arcology-oracle-entry)))
      (should first)
      (should (equal (list (buffer-name) (point)) (list (buffer-name) first)))
      (dolist (window (get-buffer-window-list buffer nil t))
        (should (equal (list (buffer-name) (window-point window)) (list (buffer-name) first))))
      (should (arcology-oracle--result-at-point))
      (should-not (buffer-modified-p)))))

(ert-deftest arcology-oracle-links-test-lists-open-on-their-first-entry ()
  "The suggestions opened with point on their header: i, x or RET said \"No note at
point\" until n was pressed.  Each list opens on its first entry (the similar notes
and the rejections too), and none shows as modified (\"**\" in the mode line)."
  (require 'arcology-oracle-rejections)
  (arcology-oracle-links-test--with-links
    (unwind-protect
        (progn
          (arcology-oracle-links-test--ask "sourdough-baking.org" "Bulk fermentation")
          (arcology-oracle-links-test--on-first-entry arcology-oracle-links-buffer-name)
          (delete-other-windows)
          (arcology-oracle-test--visit "bread-hydration.org")
          (arcology-oracle-test--goto-heading "Baker's percentages")
          (arcology-oracle-similar-show)
          (arcology-oracle-test--wait (lambda () (arcology-oracle-test--listed)) 20 "similar notes")
          (arcology-oracle-links-test--on-first-entry arcology-oracle-similar-buffer-name)
          (with-current-buffer (get-buffer-create arcology-oracle-rejections-buffer-name)
            (arcology-oracle-rejections-mode)
            (arcology-oracle--rejections-render
             `(((from . ,(arcology-oracle-test--id 'hydration)) (to . ,(arcology-oracle-test--id 'sourdough))))
             (make-hash-table :test 'equal)))
          (arcology-oracle-links-test--on-first-entry arcology-oracle-rejections-buffer-name))
      (arcology-oracle-similar-mode -1)
      (delete-other-windows)
      (dolist (name (list arcology-oracle-similar-buffer-name arcology-oracle-rejections-buffer-name))
        (when (get-buffer name) (kill-buffer name))))))

(ert-deftest arcology-oracle-links-test-insert-keeps-narrowing ()
  "`i' keeps the note's narrowing; a paragraph outside the part shown is refused."
  (arcology-oracle-links-test--with-links
    (let* ((source (arcology-oracle-links-test--ask "sourdough-baking.org" nil))
           (before (with-current-buffer source (buffer-string)))
           (suggestion (or (seq-find (lambda (s) (alist-get 'paragraph s))
                                     (arcology-oracle-links-test--suggestions))
                           (ert-fail "no suggestion with a paragraph")))
           (start-line (alist-get 'start_line (alist-get 'paragraph suggestion)))
           bounds)
      ;; Narrowed to the part above the paragraph.
      (with-current-buffer source
        (goto-char (point-min))
        (forward-line (1- start-line))
        (narrow-to-region (point-min) (point))
        (setq bounds (cons (point-min) (point-max))))
      (arcology-oracle-links-test--select suggestion)
      (should (string-match-p "outside the narrowed part"
                              (cadr (should-error (call-interactively (key-binding (kbd "i")))
                                                  :type 'user-error))))
      (with-current-buffer source
        (should (equal (cons (point-min) (point-max)) bounds))
        (should (equal (save-restriction (widen) (buffer-string)) before))
        ;; Narrowed to the paragraph: the link goes in, the narrowing stays.
        (widen)
        (goto-char (point-min))
        (forward-line (1- start-line))
        (narrow-to-region (point) (progn (forward-line (- (alist-get 'end_line (alist-get 'paragraph suggestion))
                                                            start-line -1))
                                         (point)))
        (setq bounds (cons (point-min) (point-max))))
      (arcology-oracle-links-test--select suggestion)
      (arcology-oracle-test--capturing-messages messages
        (call-interactively (key-binding (kbd "i")))
        ;; The file's line, as the list gives it, not the narrowed part's.
        (should (cl-find-if (lambda (m) (string-match-p
                                         (format ", line %d\\'" (alist-get 'end_line (alist-get 'paragraph suggestion)))
                                         m))
                            messages)))
      (with-current-buffer source
        (should (equal (point-min) (car bounds)))
        (should (buffer-narrowed-p))
        (goto-char (point-min))
        (should (search-forward (concat "[[id:" (alist-get 'node_id suggestion) "]")
                                nil t))))))

(ert-deftest arcology-oracle-links-test-insert-after-unsaved-edit ()
  "After a line is added to the paragraph, `i' writes the link after it, not mid-paragraph."
  (arcology-oracle-links-test--with-links
    (let* ((source (arcology-oracle-links-test--ask "sourdough-baking.org" nil))
           (suggestion (or (seq-find (lambda (s) (alist-get 'paragraph s))
                                     (arcology-oracle-links-test--suggestions))
                           (ert-fail "no suggestion with a paragraph")))
           (end-line (alist-get 'end_line (alist-get 'paragraph suggestion)))
           (link (format "[[id:%s]" (alist-get 'node_id suggestion))))
      (with-current-buffer source
        (goto-char (point-min))
        (forward-line end-line)
        (insert "An unsaved line closes the paragraph now.\n"))
      (arcology-oracle-links-test--select suggestion)
      (call-interactively (key-binding (kbd "i")))
      (with-current-buffer source
        (goto-char (point-min))
        (forward-line end-line)
        (should (looking-at-p (concat "An unsaved line closes the paragraph now\\. " (regexp-quote link))))))))

(ert-deftest arcology-oracle-links-test-insert-refusals ()
  "A read-only note is refused, point left alone; a vanished paragraph asks to save first."
  (arcology-oracle-links-test--with-links
    (let* ((source (arcology-oracle-links-test--ask "sourdough-baking.org" nil))
           (window (get-buffer-window source))
           (suggestion (or (seq-find (lambda (s) (alist-get 'paragraph s))
                                     (arcology-oracle-links-test--suggestions))
                           (ert-fail "no suggestion with a paragraph")))
           (paragraph (alist-get 'paragraph suggestion))
           (at (with-current-buffer source (point))))
      (with-current-buffer source (setq buffer-read-only t))
      (arcology-oracle-links-test--select suggestion)
      (should (equal (cadr (should-error (call-interactively (key-binding (kbd "i"))) :type 'user-error))
                     (format "Buffer %s is read-only" (buffer-name source))))
      (with-current-buffer source
        (should (= (point) at))
        (when window (should (= (window-point window) at)))
        (should-not (buffer-modified-p))
        (setq buffer-read-only nil)
        ;; The paragraph's first line goes, unsaved.
        (goto-char (point-min))
        (should (search-forward (car (split-string (alist-get 'text paragraph) "\n")) nil t))
        (delete-region (line-beginning-position) (line-end-position)))
      (arcology-oracle-links-test--select suggestion)
      (should (equal (cadr (should-error (call-interactively (key-binding (kbd "i"))) :type 'user-error))
                     "That paragraph is no longer in the note: save it, then press g to ask again")))))

(ert-deftest arcology-oracle-links-test-outside-the-notes ()
  "A file outside the roam directory, with an ID or without: said so, nothing asked.
As `arcology-oracle-summarize' says it, whether the roam directory
is known or the daemon is asked for it first."
  (arcology-oracle-links-test--with-links
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (dir (expand-file-name "elsewhere-links" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))
           (with-id (expand-file-name "outside.org" dir))
           (without-id (expand-file-name "outside-plain.org" dir)))
      (make-directory dir t)
      (with-temp-file with-id
        (insert ":PROPERTIES:\n:ID: 3333cccc-0000-4000-8000-0000000000ff\n:END:\n"
                "#+title: Outside\n\nBread dough hydration.\n"))
      (with-temp-file without-id (insert "#+title: Outside plain\n\nBread dough hydration.\n"))
      (dolist (file (list with-id without-id))
        (dolist (configured (list nil roam))
          (let ((arcology-oracle-roam-directory configured)
                (arcology-oracle--server-roam-dirs nil)
                (buffer (find-file-noselect file)))
            (push buffer arcology-oracle-test--buffers)
            (switch-to-buffer buffer)
            (goto-char (point-max))
            (arcology-oracle-test--capturing-messages messages
              (condition-case err
                  (arcology-oracle-suggest-links)
                (user-error (push (error-message-string err) messages)))
              (arcology-oracle-test--settled)
              (should (cl-find-if
                       (lambda (m)
                         (string-match-p
                          (concat (regexp-quote (file-name-nondirectory file))
                                  " is not among the daemon's notes (not under "
                                  (regexp-quote (abbreviate-file-name (file-name-as-directory roam))) ")")
                          m))
                       messages)))
            (should-not (get-buffer arcology-oracle-links-buffer-name))))))))

(ert-deftest arcology-oracle-links-test-a-new-note-not-saved-or-not-indexed ()
  "C-c o l in a new note: saved never, it asks to save first and sends nothing;
unknown to the daemon (saved a moment ago), it says so with the key that asks
again.  (Both showed \"no node with ID '5e1f...' in the index (HTTP 404)\".)"
  (arcology-oracle-links-test--with-links
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (arcology-oracle-roam-directory roam)
           ;; /status read already (as after the first request): nothing is asked first.
           (arcology-oracle--server-roam-dirs (list (cons (arcology-oracle--base-url) roam)))
           (buffer (find-file-noselect (expand-file-name "brand-new-links.org" roam))))
      (push buffer arcology-oracle-test--buffers)
      (switch-to-buffer buffer)
      (insert ":PROPERTIES:\n:ID: 5e1f0000-0000-4000-8000-00000000beef\n:END:\n"
              "#+title: Brand new\n\nFeeding the sourdough starter with rye.\n")
      (let ((sent nil))
        (cl-letf (((symbol-function 'arcology-oracle--http-request)
                   (lambda (&rest args) (push args sent) nil)))
          (let ((err (should-error (arcology-oracle-suggest-links) :type 'user-error)))
            (should (equal (cadr err) "Save brand-new-links.org first: suggestions are for a note as saved"))))
        (should-not sent))
      ;; Saved, but not in the index: the daemon's 404 (a note saved a moment ago).
      (let ((arcology-oracle--last-report nil))
        (cl-letf (((symbol-function 'file-exists-p) (lambda (_file) t)))
          (arcology-oracle-suggest-links))
        (arcology-oracle-test--settled)
        (with-current-buffer arcology-oracle-links-buffer-name
          (should (string-match-p  ; filled to the window: one line or more
                   "Brand new is not in the daemon's index (yet): save the note, then g asks again"
                   (replace-regexp-in-string "[ \n]+" " " (buffer-substring-no-properties (point-min) (point-max)))))
          (should-not (string-match-p "5e1f0000" (buffer-string))))))))

;; A 409 carries `retry': here a daemon restarted on other notes meanwhile
;; (the daemon refuses what Emacs asks by the notes it read before).
(ert-deftest arcology-oracle-links-test-a-refusal-that-passes-offers-to-ask-again ()
  "g in the suggestions refused by a 409 whose retry is true: the list and the
echo area say to ask again with g, once, and g then lists the suggestions."
  (arcology-oracle-links-test--with-links
    (arcology-oracle-links-test--ask "sourdough-baking.org" nil)
    (let ((url (arcology-oracle--base-url))
          (arcology-oracle--last-report nil))
      (push (cons url "an-earlier-process") arcology-oracle--daemon-instances)
      (push (cons url "/notes/of/another/daemon") arcology-oracle--daemon-notes)
      (with-current-buffer arcology-oracle-links-buffer-name
        (arcology-oracle-links-refresh))
      (arcology-oracle-test--wait (lambda () (car arcology-oracle--last-report)) 20 "the refusal")
      (let ((said (car arcology-oracle--last-report))
            (shown (with-current-buffer arcology-oracle-links-buffer-name
                     (replace-regexp-in-string "[ \n]+" " " (buffer-substring-no-properties (point-min) (point-max))))))
        (message "refused, retry true: %s" said)
        (should (string-match-p "\\`No suggestions yet: the daemon was restarted .*nothing was done, ask again with g (HTTP 409)\\'" said))
        (should (= 2 (length (split-string said "\\<again\\>"))))
        (should (string-match-p (regexp-quote "ask again with g (HTTP 409)") shown)))
      (with-current-buffer arcology-oracle-links-buffer-name
        (arcology-oracle-links-refresh))
      (arcology-oracle-test--wait (lambda () (arcology-oracle-links-test--suggestions)) 20 "the suggestions after g"))))

;; A buffer made with C-x b (no file) is never read by the daemon, with an :ID: or not.
(ert-deftest arcology-oracle-links-test-a-buffer-without-a-file-is-to-be-saved-first ()
  "C-c o l and C-c o u in an Org buffer with no file ask to save it among the notes
and send nothing, before and after M-x org-id-get-create.  C-c o l said to add an
:ID:, then sent it and said the note was not indexed yet; C-c o u said \"No org-roam
node at point\", then, with the ID, added \"[Failed: no node with ID ... (HTTP 404)]\"
to the summaries."
  (arcology-oracle-test--with-daemon
    (let ((buffer (generate-new-buffer "idea"))
          (sent nil))
      (push buffer arcology-oracle-test--buffers)
      (switch-to-buffer buffer)
      (insert "* Rye and the starter\nRye flour ferments fast.\n")
      (org-mode)
      (cl-letf (((symbol-function 'arcology-oracle--http-request)
                 (lambda (&rest args) (push args sent) nil)))
        (dolist (with-id '(nil t))
          (when with-id
            (goto-char (point-min))
            (org-set-property "ID" "5e1f0000-0000-4000-8000-00000000f11e"))
          (dolist (command '(arcology-oracle-suggest-links arcology-oracle-summarize))
            (let ((err (should-error (funcall command) :type 'user-error)))
              (should (string-match-p
                       (concat "\\`Save idea among your notes first (.*): it has no file, and "
                               (if (eq command 'arcology-oracle-summarize)
                                   "the daemon summarizes notes as saved"
                                 "suggestions are for a note as saved")
                               "\\'")
                       (cadr err)))))))
      (should-not sent)
      (should-not (get-buffer arcology-oracle-summary-buffer-name)))))

(ert-deftest arcology-oracle-links-test-a-note-moved-behind-emacss-back ()
  "C-c o l and C-c o u in a note moved away on disk (`mv' in a shell) while
visited unmodified say that its file is no longer there: they said \"Save
sourdough-baking.org first\", though it was saved, and saving writes the old
file again beside the moved one, with its IDs.  Nothing is sent."
  (arcology-oracle-links-test--with-links
    (let* ((dir (make-temp-file "moved-notes" t))
           (arcology-oracle-roam-directory dir)
           ;; /status read already (as after the first request): nothing is asked first.
           (arcology-oracle--server-roam-dirs (list (cons (arcology-oracle--base-url) dir)))
           (file (expand-file-name "sourdough-baking.org" dir)))
      (unwind-protect
          (progn
            (write-region (concat ":PROPERTIES:\n:ID: 5e1f0000-0000-4000-8000-00000000b0a7\n:END:\n"
                                  "#+title: Sourdough baking\n\n* Starter\nFeed it rye.\n")
                          nil file)
            (let ((buffer (find-file-noselect file)))
              (push buffer arcology-oracle-test--buffers)
              (switch-to-buffer buffer)
              (rename-file file (expand-file-name "baking.org" dir))
              (goto-char (point-max))
              (should-not (buffer-modified-p))
              (let ((sent nil))
                (cl-letf (((symbol-function 'arcology-oracle--http-request)
                           (lambda (&rest args) (push args sent) nil)))
                  (dolist (command '(arcology-oracle-suggest-links arcology-oracle-summarize))
                    (let ((err (should-error (funcall command) :type 'user-error)))
                      (should (equal (cadr err) (concat "sourdough-baking.org is no longer on disk (moved or deleted):"
                                                        " visit the note where it is now"))))))
                (should-not sent))
              (should-not (file-exists-p file))))
        (delete-directory dir t)))))

(ert-deftest arcology-oracle-links-test-a-note-without-an-id-says-how-to-add-one ()
  "C-c o l in a note made with C-x C-f (no :ID:) names the command that adds one: it
said only that the file needs an :ID:."
  (arcology-oracle-links-test--with-links
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (arcology-oracle-roam-directory roam)
           ;; /status read already (as after the first request): nothing is asked first.
           (arcology-oracle--server-roam-dirs (list (cons (arcology-oracle--base-url) roam)))
           (buffer (find-file-noselect (expand-file-name "no-id-yet.org" roam))))
      (push buffer arcology-oracle-test--buffers)
      (switch-to-buffer buffer)
      (insert "#+title: No ID yet\n\nRye.\n")
      (let ((err (should-error (arcology-oracle-suggest-links) :type 'user-error)))
        (should (string-match-p "needs an :ID: (M-x org-id-get-create adds one)" (cadr err)))))))

(ert-deftest arcology-oracle-links-test-save-from-the-list-saves-the-note ()
  "C-x C-s in the suggestions (or the similar notes), as \"save the note, then g
asks again\" says, saves the note the list is about: point is in the list after
C-c o l, and C-x C-s there asked \"File to save in:\" for the list's own buffer."
  (let* ((file (make-temp-file "new-note" nil ".org"))
         (note (find-file-noselect file)))
    (unwind-protect
        (dolist (list-buffer (list (get-buffer-create arcology-oracle-links-buffer-name)
                                   (arcology-oracle--similar-buffer)))
          (with-current-buffer note
            (insert "#+title: Brand new\n\nRye.\n")
            (should (buffer-modified-p)))
          (with-current-buffer list-buffer
            (if (eq list-buffer (get-buffer arcology-oracle-links-buffer-name))
                (progn (arcology-oracle-links-mode) (setq arcology-oracle--links-source note))
              (setq arcology-oracle--similar-source note))
            (let ((inhibit-read-only t)) (insert "Links to add to: Brand new\n"))  ; as a list is
            (arcology-oracle-test--capturing-messages messages
              (call-interactively (key-binding (kbd "C-x C-s")))
              (should (cl-some (lambda (m) (string-match-p "Saved .*new-note.*: g asks again" m)) messages)))
            (should-not buffer-file-name))
          (should-not (buffer-modified-p note)))
      (with-current-buffer note (set-buffer-modified-p nil))
      (kill-buffer note)
      (dolist (name (list arcology-oracle-links-buffer-name arcology-oracle-similar-buffer-name))
        (when (get-buffer name) (kill-buffer name)))
      (delete-file file))))

(ert-deftest arcology-oracle-links-test-daemon-down-one-message ()
  "With the daemon down, asking for suggestions shows one message and says so in the buffer."
  (arcology-oracle-test--with-daemon
    (let ((arcology-oracle-url (arcology-oracle-test--free-url)))
      (arcology-oracle-test--visit "sourdough-baking.org")
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-suggest-links)
        (arcology-oracle-test--settled)
        (should (= 1 (cl-count-if (lambda (m) (string-prefix-p "arcology-oracle:" m)) messages))))
      (with-current-buffer arcology-oracle-links-buffer-name
        (should (string-match-p "refused\\|connect\\|unreachable\\|down" (buffer-string))))
      (kill-buffer arcology-oracle-links-buffer-name))))

(defun arcology-oracle-links-test--place (text paragraph)
  "Where a link for PARAGRAPH (the daemon's alist) goes in an org buffer of TEXT.
As (LINE . CHARACTERS BEFORE IT ON THE LINE), or the error's message."
  (with-temp-buffer
    (insert text)
    (org-mode)
    (condition-case err
        (let ((pos (arcology-oracle--paragraph-position paragraph)))
          (goto-char pos)
          (cons (line-number-at-pos) (- (point) (line-beginning-position))))
      (error (error-message-string err)))))

(ert-deftest arcology-oracle-links-test-a-paragraph-the-daemon-read-with-bytes-not-utf-8 ()
  "A note saved in Latin-1 (examples/roam/creme-brulee.org), its paragraph quoted with
U+FFFD for each byte that is not UTF-8: so the daemon read it before it read such a note
as Emacs shows it, and so a daemon of an older version still quotes it.  Emacs shows
the letters, and finds the paragraph all the same: i on a suggestion for it said
\"That paragraph is no longer in the note: press g to ask again\", and g could never
mend it."
  (let ((text "#+title: Creme brulee\n\nSaved in Latin-1, so \"crème brûlée\" here is not UTF-8.\n\n* Custard\nHeat cream.\n")
        (line "Saved in Latin-1, so \"cr\ufffdme br\ufffdl\ufffde\" here is not UTF-8."))
    (should (equal (arcology-oracle-links-test--place
                    text `((start_line . 3) (end_line . 3) (text . ,line)))
                   (cons 3 (length "Saved in Latin-1, so \"crème brûlée\" here is not UTF-8."))))
    ;; Moved by an unsaved line above it: found by its words all the same.
    (should (equal (arcology-oracle-links-test--place
                    (concat "New line\n" text) `((start_line . 3) (end_line . 3) (text . ,line)))
                   (cons 4 (length "Saved in Latin-1, so \"crème brûlée\" here is not UTF-8."))))))

(ert-deftest arcology-oracle-links-test-a-line-the-daemon-read-as-u-fffd-only-is-not-any-line ()
  "A paragraph in a note saved in cp1251 (Russian) that an unsaved line above moved: its
first line, \"\ufffd \ufffd\" as the daemon read it, matched any line with a space,
and the link went into the English paragraph now at its line.  The bytes not UTF-8 are
letters that are not ASCII."
  (let ((text "#+title: T\n\nNew line\n\nBread and salt\n\nХлеб соль\n")
        (line "\ufffd\ufffd\ufffd\ufffd \ufffd\ufffd\ufffd\ufffd"))
    (should (equal (arcology-oracle-links-test--place
                    text `((start_line . 5) (end_line . 5) (text . ,line)))
                   (cons 7 (length "Хлеб соль"))))))

(ert-deftest arcology-oracle-links-test-a-paragraph-ends-before-latex-fixed-width-and-rules ()
  "The link goes after the prose, never into or after what follows it without a blank line.
A link after `\\end{equation}', in `: ' lines or after a rule turned them into text."
  (dolist (after '("\\begin{equation}\nQ = m c\n\\end{equation}\n" "\\begin{equation} Q = m c \\end{equation}\n"
                  ": $ kiln-log\n" "-----\n"))
    (should (equal (arcology-oracle-links-test--place
                    (concat "* Glazes\nGlazes melt at the peak:\n" after "More.\n")
                    '((start_line . 2) (end_line . 2) (text . "Glazes melt at the peak:")))
                   (cons 2 (length "Glazes melt at the peak:")))))
  ;; What Org reads as prose runs on: a \\begin that never ends, a colon and a tab.
  (should (equal (arcology-oracle-links-test--place
                  "* Glazes\nGlazes melt at the peak:\n\\begin{itemize}\n:\tstill prose\n\nMore.\n"
                  '((start_line . 2) (end_line . 4) (text . "Glazes melt at the peak:\n\\begin{itemize}\n:\tstill prose")))
                 (cons 4 (length ":\tstill prose")))))

(ert-deftest arcology-oracle-links-test-a-moved-paragraph-is-found-in-prose-near-it ()
  "Unsaved lines moved the paragraph: the same first line in an example block, a drawer
or far away is not it; the nearest line of prose that reads the same is."
  (let ((text (concat "* Template\n#+begin_example\nFiring log:\n- cone:\n#+end_example\n"
                      ":NOTES:\nFiring log:\n:END:\n"
                      "An unsaved line.\n* Today's firing\nFiring log:\n- cone 6, kiln firing schedule\n"
                      "* Much later\nFiring log:\n")))
    (should (equal (arcology-oracle-links-test--place
                    text '((start_line . 10) (end_line . 11) (text . "Firing log:\n- cone 6, kiln firing schedule")))
                   (cons 12 (length "- cone 6, kiln firing schedule"))))))

(ert-deftest arcology-oracle-links-test-no-second-link-to-the-same-note-in-a-paragraph ()
  "A paragraph that links to a note already gets no second link to it; another note's goes in."
  (with-temp-buffer
    (insert "* Bulk fermentation\nIt depends on [[id:8d13][hydration]] and time.\n\nNext paragraph.\n")
    (org-mode)
    (goto-char (point-min))
    (search-forward "and time.")
    (let ((before (buffer-string)))
      (should (string-match-p "already links to it"
                              (cadr (should-error (arcology-oracle--insert-link-here "[[id:8d13][Baker's percentages]]")
                                                  :type 'user-error))))
      (should (equal (buffer-string) before)))
    (arcology-oracle--insert-link-here "[[id:ffee][Starter]]")
    (should (search-backward "and time. [[id:ffee][Starter]]" nil t))))

(defconst arcology-oracle-links-test--link "[[id:other-id][Other note]]")

(defun arcology-oracle-links-test--insert-at (text at &optional mode)
  "Insert a link into TEXT from point at the first AT (nil: the top), by MODE.
Return (NEW-TEXT . ORG), ORG being how Org reads NEW-TEXT: see
`arcology-oracle-links-test--reading'."
  (with-temp-buffer
    (insert text)
    (org-mode)
    (goto-char (point-min))
    (when at (search-forward at) (goto-char (match-beginning 0)))
    (let ((arcology-oracle-insert-link-at (or mode 'paragraph-end)))
      (arcology-oracle--insert-link-in-note arcology-oracle-links-test--link "other-id"))
    (cons (buffer-string) (arcology-oracle-links-test--reading))))

(defun arcology-oracle-links-test--reading ()
  "What Org reads in this buffer, but for paragraphs: each element's type and value."
  (let ((tree (org-element-parse-buffer)))
    (list (org-entry-get (point-min) "ID")
          (org-element-map tree '(src-block drawer property-drawer latex-environment table keyword comment clock)
            (lambda (e) (list (org-element-type e) (org-element-property :value e) (org-element-property :tblfm e)
                              (org-element-property :drawer-name e)
                              (string-trim-right (buffer-substring-no-properties (org-element-property :begin e)
                                                                                 (org-element-property :end e))))))
          (org-element-map tree 'link
            (lambda (l) (list (org-element-property :raw-link l)
                              (and (org-element-property :contents-begin l)
                                   (buffer-substring-no-properties (org-element-property :contents-begin l)
                                                                   (org-element-property :contents-end l)))))))))

(defun arcology-oracle-links-test--only-the-link-added (text at &optional mode)
  "Insert a link into TEXT (see `arcology-oracle-links-test--insert-at');
check that only the link was added and that Org reads every other
element as before.  Return the new text."
  (pcase-let* ((`(,new . ,org) (arcology-oracle-links-test--insert-at text at mode))
               (before (with-temp-buffer (insert text) (org-mode) (arcology-oracle-links-test--reading)))
               (place (string-search arcology-oracle-links-test--link new)))
    (should place)
    (should (equal (replace-regexp-in-string " \\[\\[id:other-id\\]\\[Other note\\]\\]\\|\\[\\[id:other-id\\]\\[Other note\\]\\]\n" "" new) text))
    ;; The same elements, one link more, the user's links unchanged.
    (should (equal (car org) (car before)))
    (should (equal (cadr org) (cadr before)))
    (should (equal (remove '("id:other-id" "Other note") (nth 2 org)) (nth 2 before)))
    (should (member '("id:other-id" "Other note") (nth 2 org)))
    new))

(defconst arcology-oracle-links-test--one-entry
  '(((node_id . "other-id") (title . "Other note") (heading . "Other note") (score . 0.5) (snippet . "x")))
  "A similar list of one note, Other note.")

(defmacro arcology-oracle-links-test--with-list (text &rest body)
  "Run BODY with `note', an org buffer of TEXT, and the similar list about its first heading.
The list holds `arcology-oracle-links-test--one-entry'; the buffers
and windows are cleaned up after."
  (declare (indent 1) (debug t))
  `(let ((note (generate-new-buffer "note.org")))
     (unwind-protect
         (progn
           (with-current-buffer note
             (insert ,text)
             (org-mode)
             (goto-char (point-min)))
           (arcology-oracle--similar-render
            note (with-current-buffer note (plist-get (arcology-oracle--heading-context) :title))
            arcology-oracle-links-test--one-entry nil (with-current-buffer note (point-min)))
           ,@body)
       (delete-other-windows)
       (kill-buffer note)
       (when (get-buffer arcology-oracle-similar-buffer-name) (kill-buffer arcology-oracle-similar-buffer-name)))))

(defun arcology-oracle-links-test--press-i ()
  "Press `i' on the first entry of the similar list."
  (with-current-buffer (arcology-oracle--similar-buffer)
    (goto-char (point-min))
    (arcology-oracle-similar-next)
    (arcology-oracle-insert-link)))

(ert-deftest arcology-oracle-links-test-a-link-never-goes-into-what-a-list-item-holds ()
  "A list item's last line may end a src block, a drawer, a LaTeX environment or a
table's formulas: the link goes after a paragraph's text, never after those."
  (let ((setup "* Setup steps\n- install the package\n- add this to your init:\n  #+begin_src emacs-lisp\n  (require 'foo)\n  #+end_src\n"))
    (should (string-match-p "install the package \\[\\[id:"
                            (arcology-oracle-links-test--only-the-link-added setup "* Setup")))
    (should (string-match-p "your init: \\[\\[id:"
                            (arcology-oracle-links-test--only-the-link-added setup "- add"))))
  (should (string-match-p "- b \\[\\[id:"
                          (arcology-oracle-links-test--only-the-link-added
                           "* Log\n- a\n- b\n  :LOGBOOK:\n  - Note taken on [2024-03-05 Tue 09:00]\n  :END:\n" "- b")))
  (arcology-oracle-links-test--only-the-link-added
   "* Heat\n- the law:\n  \\begin{equation}\n  Q = m c\n  \\end{equation}\n" "* Heat")
  (arcology-oracle-links-test--only-the-link-added
   "* Sums\n- the table:\n  | 1 | 2 | 3 |\n  #+TBLFM: $3=$1+$2\n" "- the"))

(ert-deftest arcology-oracle-links-test-the-top-of-a-file-keeps-its-id-cookie-and-blocks ()
  "Before the first heading the link goes after the comments, the file's drawer and its
keywords: never above the drawer (the note lost its ID, the -*- line its reach) nor into a
block after them."
  (should (string-match-p
           "#\\+title: Three\n\n\\[\\[id:other-id\\]\\[Other note\\]\\]\n\\* Heading"
           (arcology-oracle-links-test--only-the-link-added
            "# -*- fill-column: 60 -*-\n:PROPERTIES:\n:ID:       file-node-3\n:END:\n#+title: Three\n\n* Heading\nText\n" nil)))
  (should (string-match-p
           "#\\+title: Config\n\\[\\[id:other-id\\]\\[Other note\\]\\]\n#\\+begin_src"
           (arcology-oracle-links-test--only-the-link-added
            ":PROPERTIES:\n:ID:       file-node-4\n:END:\n#+title: Config\n#+begin_src emacs-lisp :tangle yes\n(setq x 1)\n#+end_src\n" nil)))
  ;; The message says where, with no heading to speak of.
  (with-temp-buffer
    (insert ":PROPERTIES:\n:ID:       file-node-3\n:END:\n#+title: Three\n\n* Heading\nText\n")
    (org-mode)
    (goto-char (point-min))
    (should (equal (nth 2 (arcology-oracle--link-place 'paragraph-end)) "on a new line at the top of the note")))
  ;; A name belongs to the table after it: the link goes above both.
  (should (string-match-p
           "#\\+title: T\n\\[\\[id:other-id\\]\\[Other note\\]\\]\n#\\+name: kilns"
           (arcology-oracle-links-test--only-the-link-added
            ":PROPERTIES:\n:ID:       file-node-5\n:END:\n#+title: T\n#+name: kilns\n| a | b |\n" nil))))

(ert-deftest arcology-oracle-links-test-no-link-into-a-drawer-a-dynamic-block-or-a-link ()
  "From a paragraph in a drawer or a dynamic block the link goes to the heading's first
paragraph; at point, inside a link or code, after it."
  (dolist (inside '(":NOTES:\nA paragraph in the drawer.\n:END:\n"
                    "#+BEGIN: clocktable :scope file\nA paragraph in the block.\n#+END:\n"))
    (should (string-match-p "First words. \\[\\[id:"
                            (arcology-oracle-links-test--only-the-link-added
                             (concat "* Kiln\nFirst words.\n\n" inside) "A paragraph"))))
  (should (string-match-p
           "example site\\]\\] \\[\\[id:other-id"
           (arcology-oracle-links-test--only-the-link-added
            "* Links\nSee [[https://example.com][the example site]] now.\n" "site]]" 'point)))
  (should (string-match-p
           "~kiln --fire~ \\[\\[id:other-id"
           (arcology-oracle-links-test--only-the-link-added "* Code\nRun ~kiln --fire~ first.\n" "--fire" 'point)))
  ;; On a bullet, at point: after the bullet, never before it.
  (should (string-match-p
           "^- \\[\\[id:other-id\\]\\[Other note\\]\\] cone six"
           (arcology-oracle-links-test--only-the-link-added "* Cones\n- cone six\n" "- cone" 'point))))

(ert-deftest arcology-oracle-links-test-at-point-never-splits-a-word ()
  "With `arcology-oracle-insert-link-at' `point' and point inside a word (where C-s
leaves it), the link goes after the word: it wrote 'The slu [[id:...][...]] ggish
starter', two words that were one."
  (should (string-match-p "The sluggish \\[\\[id:other-id\\]\\[Other note\\]\\] starter"
                          (arcology-oracle-links-test--only-the-link-added
                           "* Starter\nThe sluggish starter\n" "ggish" 'point)))
  (should (string-match-p "日本語の勉強 \\[\\[id:other-id"
                          (arcology-oracle-links-test--only-the-link-added
                           "* 勉強\n日本語の勉強、毎日\n" "勉強、" 'point)))
  ;; Between words, or before one, it stays where point is.
  (should (string-match-p "The \\[\\[id:other-id\\]\\[Other note\\]\\] sluggish"
                          (arcology-oracle-links-test--only-the-link-added
                           "* Starter\nThe sluggish starter\n" "sluggish" 'point))))

(ert-deftest arcology-oracle-links-test-a-suggestion-stops-at-a-clock-line-and-a-drawer ()
  "The paragraph the daemon names runs only over lines Org reads as its prose."
  (should (equal (arcology-oracle-links-test--place
                  "* Kiln\nFirst words\nCLOCK: [2024-03-05 Tue 09:00]--[2024-03-05 Tue 10:00] =>  1:00\n"
                  '((start_line . 2) (end_line . 2) (text . "First words")))
                 (cons 2 (length "First words")))))


(ert-deftest arcology-oracle-links-test-i-refuses-a-list-made-for-another-heading ()
  "Point moved on before the new list came (a slow daemon): `i' says so and writes
nothing; back under the heading the list is about, the link goes in."
  (arcology-oracle-links-test--with-list "* Starter maintenance\nFeed it daily.\n* Bulk fermentation\nFour hours.\n"
    (with-current-buffer note (search-forward "Four hours"))
    (let ((before (with-current-buffer note (buffer-string))))
      (should (string-match-p "another heading"
                              (cadr (should-error (arcology-oracle-links-test--press-i) :type 'user-error))))
      (should (equal (with-current-buffer note (buffer-string)) before)))
    (with-current-buffer note (goto-char (point-min)))
    (arcology-oracle-links-test--press-i)
    (should (string-match-p "Feed it daily\\. \\[\\[id:other-id\\]" (with-current-buffer note (buffer-string))))
    ;; The heading cut out: the next one takes its place, but not its list.
    (with-current-buffer note
      (goto-char (point-min))
      (org-cut-subtree)
      (should (looking-at-p "\\* Bulk fermentation")))
    (let ((before (with-current-buffer note (buffer-string))))
      (should-error (arcology-oracle-links-test--press-i) :type 'user-error)
      (should (equal (with-current-buffer note (buffer-string)) before)))))

(ert-deftest arcology-oracle-links-test-a-stale-list-shows-what-it-showed ()
  "While another heading's list is asked for, the list shown says so, and shows what it
showed: a message stays a message, never an older heading's entries."
  (let ((note (generate-new-buffer "note.org")))
    (unwind-protect
        (cl-letf (((symbol-function 'arcology-oracle--with-roam-dir) #'ignore))
          (with-current-buffer note
            (insert "* Starter maintenance\nFeed it daily.\n* Journal :private:\nSecret.\n* Bulk fermentation\nFour hours.\n")
            (org-mode)
            (goto-char (point-min))
            (arcology-oracle-similar-refresh)
            (arcology-oracle--similar-render
             note "Starter maintenance"
             '(((node_id . "other-id") (title . "Other note") (heading . "Other note") (score . 0.5) (snippet . "x")))
             nil (point-min))
            (search-forward "Secret")
            (arcology-oracle-similar-refresh)
            (should (string-match-p "\\`Similar to: Journal\n\nThis heading is private"
                                    (with-current-buffer (arcology-oracle--similar-buffer) (buffer-string))))
            (search-forward "Four hours")
            (arcology-oracle-similar-refresh)
            (let ((shown (with-current-buffer (arcology-oracle--similar-buffer) (buffer-string))))
              (should (string-match-p "\\`Similar to: Journal\nAsking about Bulk fermentation…\n\nThis heading is private" shown))
              (should-not (string-match-p "Other note" shown)))
            ;; + (the tail folded or shown) keeps saying so.
            (with-current-buffer (arcology-oracle--similar-buffer)
              (arcology-oracle-similar-toggle-tail)
              (should (string-match-p "\\`Similar to: Journal\nAsking about Bulk fermentation…" (buffer-string))))))
      (kill-buffer note)
      (when (get-buffer arcology-oracle-similar-buffer-name) (kill-buffer arcology-oracle-similar-buffer-name)))))

(ert-deftest arcology-oracle-links-test-line-breaks-and-ends-without-a-newline ()
  "A line break (\\) ending a paragraph keeps its meaning, and a link at point beside one
never goes onto the next line (it made a heading or an item part of the paragraph); a
file that ends on its title, with no newline, gets the link on a line of its own."
  (let ((poem "* Poem\nRoses are red \\\\\nviolets are blue \\\\\n* Sourdough\n:PROPERTIES:\n:ID:       sd-1\n:END:\nFeed daily.\n"))
    (should (string-match-p "violets are blue \\[\\[id:other-id\\]\\[Other note\\]\\] \\\\\\\\\n\\* Sourdough"
                            (arcology-oracle-links-test--only-the-link-added poem "\\\\\n* Sour" 'point)))
    (should (string-match-p "violets are blue \\[\\[id:other-id\\]\\[Other note\\]\\] \\\\\\\\\n\\* Sourdough"
                            (arcology-oracle-links-test--only-the-link-added poem "violets"))))
  (should (string-match-p "first item \\[\\[id:other-id\\]\\[Other note\\]\\] \\\\\\\\\n- second"
                          (arcology-oracle-links-test--only-the-link-added
                           "* List\n- first item \\\\\n- second item\n" "\\\\\n- second" 'point)))
  (dolist (top '(":PROPERTIES:\n:ID:       file-6\n:END:\n#+title: T" "#+title: Only a title" "# just a comment"))
    (should (string-suffix-p "\n[[id:other-id][Other note]]\n"
                             (car (arcology-oracle-links-test--insert-at top nil))))))

(ert-deftest arcology-oracle-links-test-a-cr-ending-a-line-stays-at-its-end ()
  "In a file of mixed line endings Emacs shows a CRLF line's CR: the link goes before it."
  (should (string-match-p "Text here \\[\\[id:other-id\\]\\[Other note\\]\\]\r\n"
                          (car (arcology-oracle-links-test--insert-at "* H\nText here\r\n\nMore\n* Next\nx\n" "* H")))))

(ert-deftest arcology-oracle-links-test-a-ticked-box-three-backslashes-and-crlf-drawers ()
  "A ticked box (its heading's cookie) keeps the list the heading's; three backslashes
are no line break to keep; a CRLF file drawer that Emacs shows as text gets no link."
  (arcology-oracle-links-test--with-list "* Packing [1/3]\nPack light.\n- [X] socks\n- [ ] boots\n- [ ] hat\n"
    (with-current-buffer note
      (search-forward "[ ] boots")
      (org-ctrl-c-ctrl-c)
      (goto-char (point-min))
      (should (looking-at-p "\\* Packing \\[2/3\\]")))
    (arcology-oracle-links-test--press-i)
    (should (string-match-p "Pack light\\. \\[\\[id:other-id\\]" (with-current-buffer note (buffer-string)))))
  (should (string-match-p "First line \\\\\\\\\\\\ \\[\\[id:other-id\\]"
                          (car (arcology-oracle-links-test--insert-at "* H\nFirst line \\\\\\\n" "* H"))))
  (should-not (string-match-p ":END: \\[\\[id:"
                              (car (arcology-oracle-links-test--insert-at
                                    ":PROPERTIES:\r\n:ID: x\r\n:END:\r\n#+title: T\n" nil)))))

(ert-deftest arcology-oracle-links-test-a-refresh-skipped-is-asked-again ()
  "A refresh due while the minibuffer (or another buffer) was selected is not dropped:
the next command in the note asks again, so the list does not stay another heading's."
  (with-temp-buffer
    (insert "* A\nx\n* B\ny\n")
    (org-mode)
    (setq arcology-oracle--similar-last-heading 5)
    (let ((note (current-buffer)))
      (with-temp-buffer  ; selected-window shows another buffer
        (arcology-oracle--similar-timer-fn note))
      (should-not (buffer-local-value 'arcology-oracle--similar-last-heading note)))))

(ert-deftest arcology-oracle-links-test-a-namesake-in-its-place-and-two-windows ()
  "A heading cut out leaves its place to a namesake: `i' refuses and the next command
asks again.  With the note in two windows, `i' writes under the heading of the window
used last, which the list is about."
  (arcology-oracle-links-test--with-list "* Meeting\nAbout kilns.\n* Meeting\nAbout taxes.\n"
    (with-current-buffer note
      (org-cut-subtree)
      (should (looking-at-p "\\* Meeting\nAbout taxes")))
    (should (arcology-oracle--similar-heading-gone-p))
    (should-error (arcology-oracle-links-test--press-i) :type 'user-error)
    (should-not (string-match-p "other-id" (with-current-buffer note (buffer-string)))))
  ;; Two windows on the note: Alpha in the older, Beta in the one used last.
  (arcology-oracle-links-test--with-list "* Alpha\nFirst.\n* Beta\nSecond.\n"
    (delete-other-windows)
    (switch-to-buffer note)
    (let ((older (selected-window))
          (newer (split-window-below)))
      (select-window newer)
      (search-forward "Second")
      (arcology-oracle--similar-render note "Beta" arcology-oracle-links-test--one-entry nil
                                       (save-excursion (org-back-to-heading t) (point)))
      (select-window older)
      (select-window newer)
      (arcology-oracle-links-test--press-i)
      (should (string-match-p "Second\\. \\[\\[id:other-id\\]" (with-current-buffer note (buffer-string)))))))

(ert-deftest arcology-oracle-links-test-a-renamed-heading-is-asked-again ()
  "Renaming the heading (the buffer already modified) schedules a refresh, as a move
does: the list, which checks its title, would otherwise never catch up."
  (let ((note (generate-new-buffer "note.org")))
    (unwind-protect
        (progn
          (delete-other-windows)
          (switch-to-buffer note)
          (insert "* Autolyse\nRest the dough.\n")
          (org-mode)
          (set-buffer-modified-p t)
          (display-buffer (arcology-oracle--similar-buffer) '(display-buffer-pop-up-window))
          (with-current-buffer (arcology-oracle--similar-buffer) (setq arcology-oracle--similar-source note))
          (goto-char (point-min))
          (arcology-oracle--similar-post-command-h)
          (when (timerp arcology-oracle--similar-timer) (cancel-timer arcology-oracle--similar-timer))
          (setq arcology-oracle--similar-timer nil)
          (arcology-oracle--similar-post-command-h)
          (should-not arcology-oracle--similar-timer)  ; nothing changed: nothing asked
          (end-of-line)
          (insert " method")
          (arcology-oracle--similar-post-command-h)
          (should (timerp arcology-oracle--similar-timer)))
      (when (timerp arcology-oracle--similar-timer) (cancel-timer arcology-oracle--similar-timer))
      (setq arcology-oracle--similar-timer nil)
      (delete-other-windows)
      (kill-buffer note)
      (when (get-buffer arcology-oracle-similar-buffer-name) (kill-buffer arcology-oracle-similar-buffer-name)))))

(ert-deftest arcology-oracle-links-test-undo-in-the-list-takes-the-link-out ()
  "Undo (C-/) in the similar notes right after i takes the link out of the note, as
README's \"one undo removes it\" leads one to try there: it said \"Buffer is
read-only: #<buffer *arcology-oracle similar*>\".  The link suggestions do the same."
  (arcology-oracle-links-test--with-list "* Autolyse\nRest the dough.\n"
    (with-current-buffer note (buffer-enable-undo) (undo-boundary))
    (let ((before (with-current-buffer note (buffer-string))))
      (arcology-oracle-links-test--press-i)
      (should-not (equal (with-current-buffer note (buffer-string)) before))
      (with-current-buffer (arcology-oracle--similar-buffer)
        (call-interactively (key-binding (kbd "C-/"))))
      (should (equal (with-current-buffer note (buffer-string)) before))))
  (should (eq (lookup-key arcology-oracle-links-mode-map [remap undo]) #'arcology-oracle-undo-in-listed-note)))

(ert-deftest arcology-oracle-links-test-undo-in-the-list-takes-a-count ()
  "C-u 2 C-/ in the list undoes two changes of the note, as in the note: the count was
dropped, and one change was undone."
  (arcology-oracle-links-test--with-list "* Autolyse\nRest the dough.\n"
    (let ((before (with-current-buffer note (buffer-string))))
      (with-current-buffer note
        (buffer-enable-undo)
        (undo-boundary)
        (goto-char (point-max))
        (insert "One.\n")
        (undo-boundary)
        (insert "Two.\n")
        (undo-boundary))
      (with-current-buffer (arcology-oracle--similar-buffer)
        (let ((current-prefix-arg 2))
          (call-interactively (key-binding (kbd "C-/")))))
      (should (equal (with-current-buffer note (buffer-string)) before)))))

(ert-deftest arcology-oracle-links-test-asked-from-a-list-whose-note-was-killed ()
  "C-c o a, u or l in the similar notes once their note was killed: refused, saying so.
C-c o a asked about the list's own text (scores and titles) as if it were a note, and
C-c o u said \"Summaries need an org-mode buffer\"."
  (arcology-oracle-links-test--with-list "* Autolyse\nRest the dough.\n"
    (kill-buffer note)
    (with-current-buffer (arcology-oracle--similar-buffer)
      (dolist (command '(arcology-oracle-summarize arcology-oracle-suggest-links))
        (should (string-match-p "no longer open"
                                (cadr (should-error (funcall command) :type 'user-error)))))
      (should (string-match-p "no longer open"
                              (cadr (should-error (arcology-oracle-ask "What is here?") :type 'user-error)))))))

(ert-deftest arcology-oracle-links-test-a-list-whose-note-was-killed-refuses-before-asking ()
  "C-c o a (and C-u C-c o u) in a list whose note was killed refuse before their prompt.
C-c o a asked \"Ask about this buffer: \" (the list, which it is not about), and only once
a question was typed said the note was gone."
  (arcology-oracle-links-test--with-list "* Autolyse\nRest the dough.\n"
    (kill-buffer note)
    (with-current-buffer (arcology-oracle--similar-buffer)
      (let ((prompts nil))
        (cl-letf (((symbol-function 'read-string)
                   (lambda (prompt &rest _) (push prompt prompts) "What is here?")))
          (dolist (command '(arcology-oracle-ask arcology-oracle-summarize))
            (let ((current-prefix-arg '(4)))
              (should (string-match-p "no longer open"
                                      (cadr (should-error (call-interactively command) :type 'user-error)))))))
        (should-not prompts)))))

(ert-deftest arcology-oracle-links-test-the-list-s-note-killed ()
  "The note the list was about killed (C-x k): the next command in another note
asks for its list.  The hook signalled (wrong-type-argument number-or-marker-p nil),
its markers pointing nowhere, and Emacs took it off `post-command-hook' for good: the
list stayed the killed note's, and \"Error in post-command-hook\" was shown."
  (let ((other (generate-new-buffer "other.org")))
    (unwind-protect
        (arcology-oracle-links-test--with-list "* Autolyse\nRest the dough.\n"
          (delete-other-windows)
          (switch-to-buffer other)
          (insert "* Starter\nFeed it.\n")
          (org-mode)
          (goto-char (point-min))
          (display-buffer (arcology-oracle--similar-buffer) '(display-buffer-pop-up-window))
          ;; What the hook remembers of OTHER's last command: the same heading.
          (setq arcology-oracle--similar-last-heading (point-min)
                arcology-oracle--similar-last-modified (and (buffer-modified-p) t)
                arcology-oracle--similar-last-line "* Starter")
          (with-current-buffer (arcology-oracle--similar-buffer) (setq arcology-oracle--similar-source other))
          (kill-buffer note)
          (should (arcology-oracle--similar-heading-gone-p))
          (arcology-oracle--similar-post-command-h)
          (should (timerp arcology-oracle--similar-timer)))
      (when (timerp arcology-oracle--similar-timer) (cancel-timer arcology-oracle--similar-timer))
      (setq arcology-oracle--similar-timer nil)
      (delete-other-windows)
      (kill-buffer other))))

(provide 'arcology-oracle-links-test)

;;; arcology-oracle-links-test.el ends here
