;;; arcology-oracle-firstday-test.el --- ERT tests of what a new user runs into -*- lexical-binding: t -*-

;;; Commentary:

;; The keys and screens of issue 27 ("the first day in Emacs"), with the
;; fixtures of arcology-oracle-test.el: where `i' writes a link, RET
;; and `g' in the suggestions buffer, rejections taken back, memorize
;; with the daemon down and with a source, windows that leave the note
;; in place (C-x 1 included), the relevance cut, what a result's lines
;; say, sources that open their heading, the answers' dates, model and
;; time, and summaries kept.  Pure tests need no daemon.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-memory)
(require 'arcology-oracle-test-support)
(require 'arcology-oracle-test)

(defvar org-roam-dailies-directory)
(defvar org-roam-directory)

;;;; Where a link goes (item 1)

(defconst arcology-oracle-firstday-test--note
  (concat ":PROPERTIES:\n:ID: file-id\n:END:\n#+title: Bread\n\nIntro line.\n\n"
          "* Baker's percentages\n:PROPERTIES:\n:ID: bp-id\n:END:\n"
          "Every ingredient is a percentage\nof the flour.\n\n"
          "#+begin_src sh\nls\n#+end_src\n\nSecond paragraph.\n"
          "* Empty heading\n"
          "* Last\nText.")
  "An org note with a heading body, a src block and an empty heading.")

(defun arcology-oracle-firstday-test--insert-from (search &optional mode)
  "Insert a link to node `target' from the line after SEARCH; return (BEFORE AFTER WHERE).
MODE is `arcology-oracle-insert-link-at'."
  (with-temp-buffer
    (org-mode)
    (insert arcology-oracle-firstday-test--note)
    (buffer-enable-undo)
    (setq buffer-undo-list nil)
    (goto-char (point-min))
    (search-forward search)
    (beginning-of-line)
    (let* ((before (buffer-string))
           (arcology-oracle-insert-link-at (or mode 'paragraph-end))
           (where (arcology-oracle--insert-link-in-note "[[id:target][Target]]" "target"))
           (after (buffer-string)))
      (let ((last-command nil)) (undo))
      (should (equal (buffer-string) before))
      (list before after where))))

(ert-deftest arcology-oracle-firstday-test-link-never-in-heading-or-drawer ()
  "From a heading line, its drawer or a src block, the link ends the body's first paragraph."
  (dolist (from '("* Baker's percentages" ":ID: bp-id" "ls"))
    (pcase-let ((`(,_ ,after ,where) (arcology-oracle-firstday-test--insert-from from)))
      (should (string-match-p "^\\* Baker's percentages\n:PROPERTIES:\n:ID: bp-id\n:END:\n" after))
      (should (string-match-p "^of the flour\\. \\[\\[id:target\\]\\[Target\\]\\]$" after))
      (should (string-match-p "\\`at the end of the first paragraph under the heading, line 13\\'" where))))
  ;; In a paragraph: the end of that paragraph, whatever the option.
  (pcase-let ((`(,_ ,after ,where) (arcology-oracle-firstday-test--insert-from "Second para")))
    (should (string-match-p "^Second paragraph\\. \\[\\[id:target\\]" after))
    (should (string-prefix-p "at the end of the paragraph" where)))
  (pcase-let ((`(,_ ,after ,_) (arcology-oracle-firstday-test--insert-from "Second para" 'point)))
    (should (string-match-p "^\\[\\[id:target\\]\\[Target\\]\\] Second paragraph" after)))
  ;; An empty body: a line of its own under the heading.
  (pcase-let ((`(,_ ,after ,where) (arcology-oracle-firstday-test--insert-from "* Empty")))
    (should (string-match-p "^\\* Empty heading\n\\[\\[id:target\\]\\[Target\\]\\]\n\\* Last" after))
    (should (string-prefix-p "on a new line under the heading" where)))
  ;; The keyword lines of the file: the first paragraph after them.
  (pcase-let ((`(,_ ,after ,_) (arcology-oracle-firstday-test--insert-from "#+title")))
    (should (string-match-p "^#\\+title: Bread\n\nIntro line\\. \\[\\[id:target\\]" after))))

(ert-deftest arcology-oracle-firstday-test-no-link-to-the-note-itself ()
  "The note being read is not listed, nor linked to from itself."
  (with-temp-buffer
    (org-mode)
    (insert arcology-oracle-firstday-test--note)
    (goto-char (point-min))
    (search-forward "Every ingredient")
    (let ((context (arcology-oracle--heading-context)))
      (should (equal (arcology-oracle--similar-filter
                      '(((node_id . "file-id") (title . "Bread"))
                        ((node_id . "bp-id") (title . "Baker's percentages"))
                        ((node_id . "other") (title . "Other")))
                      context)
                     '(((node_id . "other") (title . "Other"))))))
    (should-error (arcology-oracle--insert-link-in-note "[[id:file-id][Bread]]" "file-id")
                  :type 'user-error)))

(ert-deftest arcology-oracle-firstday-test-i-from-heading-line-in-similar-window ()
  "`i' in the similar window with point on a heading line keeps the heading and says where."
  (arcology-oracle-test--with-daemon
    (let* ((dir (expand-file-name "roam-firstday" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))
           (file (expand-file-name "hydration-copy.org" dir)))
      (make-directory dir t)
      (with-temp-file file
        (insert "#+title: Hydration copy\n\n* Baker's percentages\n"
                "Every ingredient is a percentage of the total flour weight.\n"))
      (let ((source (find-file-noselect file)))
        (push source arcology-oracle-test--buffers)
        (switch-to-buffer source)
        (goto-char (point-min))
        (search-forward "* Baker")
        (beginning-of-line)
        (arcology-oracle-similar-show)
        (arcology-oracle-test--wait (lambda () (arcology-oracle-test--listed)) 20 "similar notes")
        (set-buffer arcology-oracle-similar-buffer-name)
        (goto-char (point-min))
        (arcology-oracle-similar-next)
        (let ((link (arcology-oracle--link-for (get-text-property (point) 'arcology-oracle-result))))
          (arcology-oracle-test--capturing-messages messages
            (call-interactively (key-binding (kbd "i")))
            (should (string-match-p "at the end of the first paragraph under the heading, line 4"
                                    (car messages))))
          (with-current-buffer source
            (should (equal (buffer-substring-no-properties (point-min) (point-max))
                           (concat "#+title: Hydration copy\n\n* Baker's percentages\n"
                                   "Every ingredient is a percentage of the total flour weight. "
                                   link "\n")))))))))

;;;; Suggestions: RET, g after i, rejections (items 2, 3)

(defun arcology-oracle-firstday-test--suggestions ()
  "Return the suggestions listed, waiting for them."
  (arcology-oracle-test--wait (lambda () (arcology-oracle-links-test--suggestions)) 20 "link suggestions"))

(defun arcology-oracle-firstday-test--refreshed ()
  "Press g in the suggestions buffer and wait for the answer."
  (with-current-buffer arcology-oracle-links-buffer-name
    (arcology-oracle-links-refresh)
    (arcology-oracle-test--settled)))

(ert-deftest arcology-oracle-firstday-test-suggestions-ret-g-and-rejections ()
  "RET visits a suggestion; one inserted is not offered again; x says how to undo; u and the list undo."
  (require 'arcology-oracle-links-test)
  (arcology-oracle-test--with-daemon
    (unwind-protect
        (let* ((source (arcology-oracle-test--visit "sourdough-baking.org"))
               (note-window (selected-window)))
          (goto-char (point-min))
          (arcology-oracle-links-test--suggest)
          (let* ((first (car (arcology-oracle-firstday-test--suggestions)))
                 (id (alist-get 'node_id first)))
            ;; The note keeps its window; the list is in a side window.
            (should (eq (window-buffer note-window) source))
            (should (window-parameter (selected-window) 'window-side))
            ;; RET visits the suggested note, without an error.
            (goto-char (point-min))
            (search-forward (alist-get 'title first))
            (call-interactively (key-binding (kbd "RET")))
            (push (current-buffer) arcology-oracle-test--buffers)
            (should (equal (file-name-nondirectory buffer-file-name)
                           (file-name-nondirectory (alist-get 'file first))))
            (should (= (line-number-at-pos) (alist-get 'line first)))
            ;; i, then g before saving: not offered again.
            (select-window (get-buffer-window arcology-oracle-links-buffer-name))
            (goto-char (point-min))
            (search-forward (alist-get 'title first))
            (call-interactively (key-binding (kbd "i")))
            (should (buffer-modified-p source))
            (arcology-oracle-firstday-test--refreshed)
            (should-not (member id (mapcar (lambda (s) (alist-get 'node_id s))
                                           (arcology-oracle-links-test--suggestions))))
            ;; Undone, it is offered again.
            (arcology-oracle-links-test--undo source)
            (arcology-oracle-firstday-test--refreshed)
            (should (member id (mapcar (lambda (s) (alist-get 'node_id s))
                                       (arcology-oracle-links-test--suggestions))))
            ;; x says how to take it back; u does.
            (set-buffer arcology-oracle-links-buffer-name)
            (goto-char (point-min))
            (search-forward (alist-get 'title first))
            (arcology-oracle-test--capturing-messages messages
              (call-interactively (key-binding (kbd "x")))
              (arcology-oracle-test--settled)
              (should (cl-find-if (lambda (m) (string-match-p "Rejected .* for good: u takes it back, R lists" m))
                                  messages)))
            (should-not (member id (mapcar (lambda (s) (alist-get 'node_id s))
                                           (arcology-oracle-links-test--suggestions))))
            (with-current-buffer arcology-oracle-links-buffer-name
              (call-interactively (key-binding (kbd "u"))))
            (arcology-oracle-test--settled)
            (should (member id (mapcar (lambda (s) (alist-get 'node_id s))
                                       (arcology-oracle-links-test--suggestions))))
            ;; Rejected again, then listed and taken back from the list.
            (with-current-buffer arcology-oracle-links-buffer-name
              (goto-char (point-min))
              (search-forward (alist-get 'title first))
              (call-interactively (key-binding (kbd "x")))
              (arcology-oracle-test--settled)
              (call-interactively (key-binding (kbd "R"))))
            (arcology-oracle-test--settled)
            (with-current-buffer arcology-oracle-rejections-buffer-name
              (goto-char (point-min))
              (should (search-forward (alist-get 'title first) nil t))
              (should (string-prefix-p "Rejected links from: Sourdough Baking" (buffer-string)))
              (call-interactively (key-binding (kbd "u")))
              (arcology-oracle-test--settled)
              (should (string-match-p "No rejections" (buffer-string))))))
      (let (done)
        (arcology-oracle--json "DELETE" "/suggest-links/rejections" :callback (lambda (_) (setq done t)))
        (arcology-oracle-test--wait (lambda () done)))
      (dolist (name (list arcology-oracle-links-buffer-name arcology-oracle-rejections-buffer-name))
        (when (get-buffer name) (kill-buffer name))))))

(ert-deftest arcology-oracle-firstday-test-suggestions-relevance-cut ()
  "Suggestions below the relevance cut are folded behind one line; + shows them."
  (unwind-protect
      (progn
        (arcology-oracle--links-render
         nil "n" "Note"
         '(((node_id . "a") (title . "Close") (score . 0.91) (heading (heading . "Here") (line . 3)))
           ((node_id . "b") (title . "Far") (score . 0.3) (below_cutoff . t)
            (heading (heading . "Here") (line . 3)))))
        (with-current-buffer arcology-oracle-links-buffer-name
          (should (string-match-p "^0\\.91  Close$" (buffer-string)))
          (should (string-match-p "^— 1 more below relevance, \\+ to show —$" (buffer-string)))
          (should-not (string-match-p "Far" (buffer-string)))
          (call-interactively (key-binding (kbd "+")))
          (should (string-match-p "^0\\.30  Far$" (buffer-string)))))
    (when (get-buffer arcology-oracle-links-buffer-name)
      (kill-buffer arcology-oracle-links-buffer-name))))

;; After i on an entry below the cut the line still said "2 below relevance",
;; and a paragraph's long line ran past the window, cut by Emacs with a $.
(ert-deftest arcology-oracle-firstday-test-suggestions-count-and-cut-lines ()
  "i on a suggestion below the cut counts one fewer there; lines fit the window."
  (let ((source (generate-new-buffer "note.org"))
        (long (concat "Every ingredient is a percentage of the total flour weight, so a formula "
                      "scales to any batch size and any oven you happen to own.")))
    (unwind-protect
        (progn
          (with-current-buffer source
            (insert "* Here\n:PROPERTIES:\n:ID: n\n:END:\nA paragraph about bread.\n")
            (org-mode))
          (display-buffer (get-buffer-create arcology-oracle-links-buffer-name)
                          '(display-buffer-in-side-window (side . right) (window-width . 50)))
          (arcology-oracle--links-render
           source "n" "Here"
           `(((node_id . "a") (title . "Close") (score . 0.91) (heading (heading . "Here") (line . 1))
              (paragraph (start_line . 5) (end_line . 5) (text . ,long)))
             ((node_id . "b") (title . "Far") (score . 0.3) (below_cutoff . t)
              (heading (heading . "Here") (line . 1)))
             ((node_id . "c") (title . "Farther") (score . 0.2) (below_cutoff . t)
              (heading (heading . "Here") (line . 1)))))
          (with-current-buffer arcology-oracle-links-buffer-name
            (let ((width (window-width (get-buffer-window (current-buffer) t))))
              (should (cl-every (lambda (line) (< (string-width line) width))
                                (split-string (buffer-string) "\n")))
              (should (string-match-p "^  > Every ingredient is a percentage [a-z ]*…$" (buffer-string))))
            (select-window (get-buffer-window (current-buffer) t))
            (call-interactively (key-binding (kbd "+")))
            (should (string-match-p "^— 2 below relevance, \\+ to fold —$" (buffer-string)))
            (goto-char (point-min))
            (re-search-forward "^0\\.30  Far$")
            (goto-char (match-beginning 0))
            (call-interactively (key-binding (kbd "i")))
            (should (string-match-p "^— 1 below relevance, \\+ to fold —$" (buffer-string)))
            (should-not (string-match-p "^0\\.30  Far$" (buffer-string)))
            ;; Point is on the entry that took its place.
            (should (looking-at-p "0\\.20  Farther$")))
          (with-current-buffer source
            (should (string-match-p "\\[\\[id:b\\]\\[Far\\]\\]" (buffer-string)))))
      (with-current-buffer source (set-buffer-modified-p nil))
      (kill-buffer source)
      (when (get-buffer arcology-oracle-links-buffer-name)
        (kill-buffer arcology-oracle-links-buffer-name))
      (delete-other-windows))))

;;;; Memorize (items 4, 9)

(ert-deftest arcology-oracle-firstday-test-memorize-daemon-down-keeps-text ()
  "With the daemon down the text typed goes on the kill ring, and the message says so."
  (arcology-oracle-test--with-daemon
    (let ((arcology-oracle-url (arcology-oracle-test--free-url))
          (kill-ring nil))
      (arcology-oracle-test--capturing-messages messages
        (with-temp-buffer
          (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "Ring the farrier on Monday")))
            (call-interactively #'arcology-oracle-memorize)))
        (arcology-oracle-test--settled)
        (should (equal (current-kill 0) "Ring the farrier on Monday"))
        (should (cl-find-if (lambda (m) (string-match-p "not reachable.*nothing was remembered, your text is on the kill ring" m))
                            messages))))))

(ert-deftest arcology-oracle-firstday-test-memorize-source-link-and-dailies ()
  "The capture links back to its heading, its link is on the kill ring, it lands in org-roam's dailies."
  (arcology-oracle-test--with-daemon
    (let* ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
           (org-roam-directory roam)
           (org-roam-dailies-directory "journal/")
           (arcology-oracle-memorize-tags nil)
           (kill-ring nil)
           (daily (expand-file-name (format-time-string "journal/%Y-%m-%d.org") roam)))
      (should (eq (lookup-key arcology-oracle-command-map (kbd "M")) #'arcology-oracle-memorize))
      (arcology-oracle-test--visit "sourdough-baking.org")
      (arcology-oracle-test--goto-heading "Feeding schedule")
      (forward-line 1)
      (transient-mark-mode 1)
      (set-mark (point))
      (end-of-line)
      (setq arcology-oracle-last-memory nil)
      (call-interactively #'arcology-oracle-memorize)
      (arcology-oracle-test--wait (lambda () arcology-oracle-last-memory) 20 "the capture")
      (deactivate-mark)
      (should (equal (alist-get 'file arcology-oracle-last-memory)
                     (format-time-string "journal/%Y-%m-%d.org")))
      (should (equal (current-kill 0) (alist-get 'link arcology-oracle-last-memory)))
      (with-temp-buffer
        (insert-file-contents daily)
        (should (re-search-forward
                 (concat "^:SOURCE: +\\[\\[file:.*sourdough-baking\\.org::\\*Feeding schedule\\]"
                         "\\[Sourdough Baking › Starter maintenance › Feeding schedule\\]\\]$")
                 nil t)))
      (delete-file daily))))

;;;; Windows (items 5, 13)

(ert-deftest arcology-oracle-firstday-test-results-leave-the-note-in-place ()
  "Summaries (answered or failed) show in a side window; the note keeps its window."
  (arcology-oracle-test--with-daemon
    (let* ((note (arcology-oracle-test--visit "bread-hydration.org"))
           (window (selected-window)))
      (arcology-oracle-test--goto-heading "Autolyse")
      (arcology-oracle-summarize)
      (should (eq (window-buffer window) note))
      ;; The session's first command asks the daemon's /status first.
      (arcology-oracle-test--wait (lambda () (get-buffer-window arcology-oracle-summary-buffer-name))
                                  10 "the summary shown")
      (let ((shown (get-buffer-window arcology-oracle-summary-buffer-name)))
        (should shown)
        (should (window-parameter shown 'window-side)))
      (arcology-oracle-test--settled 30)
      (let ((arcology-oracle-url (arcology-oracle-test--free-url)))
        (arcology-oracle-summarize)
        (arcology-oracle-test--settled))
      (should (eq (window-buffer window) note))
      (should (eq (selected-window) window)))))

(ert-deftest arcology-oracle-firstday-test-similar-shares-the-org-roam-side ()
  "The similar window goes below a shown org-roam buffer, not beside the note."
  (require 'org-roam)
  (arcology-oracle-test--with-daemon
    (let ((roam (get-buffer-create "*org-roam*")))
      (push roam arcology-oracle-test--buffers)
      (with-current-buffer roam (org-roam-mode))
      (arcology-oracle-test--visit "bread-hydration.org")
      (let* ((note-window (selected-window))
             (roam-window (display-buffer roam '(display-buffer-in-side-window (side . right) (slot . 0)
                                                                               (window-width . 0.3))))
             (width (window-width note-window)))
        (arcology-oracle-similar-show)
        (arcology-oracle-test--settled)
        (let ((similar (get-buffer-window arcology-oracle-similar-buffer-name)))
          (should (window-live-p roam-window))
          (should (eq (window-buffer roam-window) roam))
          (should similar)
          (should (eq (window-parameter similar 'window-side) 'right))
          (should (= (window-width note-window) width))
          ;; C-x 1 in the side window: the list alone, no error.
          (select-window similar)
          (call-interactively #'delete-other-windows)
          (should (equal (window-list) (list (selected-window))))
          (should (equal (buffer-name (window-buffer)) arcology-oracle-similar-buffer-name)))))))

;;;; What a result says (items 6, 7, 10)

(defconst arcology-oracle-firstday-test--results
  '(((node_id . "a") (title . "A very long title that would push the score past the edge of a narrow window")
     (heading . "Logging") (olp "A very long title that would push the score past the edge of a narrow window")
     (score . 0.97) (snippet . ":LOGBOOK:\nCLOCK: [2024-01-01 Mon 10:00]\n:END:\nRun =make= with ~-j4~.\n| a | b |\n|---+---|"))
    ((node_id . "b") (title . "Empty") (heading . "Empty") (score . 0.95) (snippet . "Empty") (linked . t))
    ((node_id . "c") (title . "Tomatoes") (heading . "Tomatoes") (score . 0.48) (below_cutoff . t))
    ((node_id . "d") (title . "Rust") (heading . "Rust") (score . 0.41) (below_cutoff . t)))
  "Results as the relevance daemon sends them with all=true.")

(ert-deftest arcology-oracle-firstday-test-similar-lines-and-relevance-cut ()
  "Score first, plain snippets, no repeated title, marks, and a folded tail behind +."
  (unwind-protect
      (progn
        (display-buffer (arcology-oracle--similar-buffer)
                        '(display-buffer-in-side-window (side . right) (window-width . 45)))
        (arcology-oracle--similar-render nil "Here" arcology-oracle-firstday-test--results)
        (with-current-buffer arcology-oracle-similar-buffer-name
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            ;; The score first, the title cut to fit, the path title first.
            (should (string-match-p "^0\\.97  A very long title that would push [a-z ]*…$" text))
            (should (string-match-p "^  A very long title that would push [a-z ]*…$" text))
            (should (cl-every (lambda (line) (<= (string-width line) 45)) (split-string text "\n")))
            (should (string-match-p "^  Run make with -j4\\. a · b$" text))
            (should (string-match-p "^0\\.95  Empty linked\n  Empty\n\n" text))
            (should (string-match-p "^— 2 more below relevance, \\+ to show —$" text))
            (should-not (string-match-p "Tomatoes" text)))
          (call-interactively (key-binding (kbd "+")))
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (should (string-match-p "^— 2 below relevance, \\+ to fold —$" text))
            (should (string-match-p "^0\\.48  Tomatoes$" text)))
          ;; Messages are filled to the window, not cut at its edge.
          (arcology-oracle--similar-render nil "Here" (concat "daemon not reachable at http://127.0.0.1:7348 "
                                                              "(connection refused): is the service running?"))
          (goto-char (point-min))
          (should (search-forward "is the service running?" nil t))
          (should (cl-every (lambda (line) (<= (string-width line) 45))
                            (split-string (buffer-string) "\n")))))
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))
    (delete-other-windows)))

(ert-deftest arcology-oracle-firstday-test-marks-seen-in-a-narrow-window ()
  "On an 80-column terminal the side window is 24 columns: each line fits it and
the marks are seen, on a line of their own when they do not fit beside the title
\(lines were made 40 columns wide, and Emacs cut \"linked both ways\" at the edge)."
  (unwind-protect
      (progn
        (display-buffer (arcology-oracle--similar-buffer)
                        '(display-buffer-in-side-window (side . right) (window-width . 24)))
        (arcology-oracle--similar-render
         nil "Here" '(((node_id . "a") (title . "Bread Hydration") (heading . "Bread Hydration") (score . 0.1)
                       (snippet . "Hydration is the weight of water divided by the weight of flour.")
                       (linked . t) (links_here . t))
                      ((node_id . "b") (title . "Rye") (heading . "Rye") (score . 0.35) (snippet . "Rye"))
                      ((node_id . "c") (title . "Copy") (heading . "Copy") (score . 0.3) (links_here . t))))
        (with-current-buffer arcology-oracle-similar-buffer-name
          (let* ((width (window-width (get-buffer-window (current-buffer))))
                 (text (buffer-substring-no-properties (point-min) (point-max)))
                 (entries (cdr (split-string text "\n"))))
            (should (<= width 24))
            ;; The last column is Emacs's: a line as wide as the window shows $ there.
            (should (cl-every (lambda (line) (< (string-width line) width)) entries))
            (should (string-match-p "^0\\.10  Bread Hydration\n  linked both ways\n  Bread Hydration\n" text))
            (should (string-match-p "^0\\.35  Rye\n  Rye\n" text))
            (should (string-match-p "^0\\.30  Copy links here$" text))
            ;; n moves from entry to entry, the marks' line included in its entry.
            (goto-char (point-min))
            (arcology-oracle-similar-next)
            (should (looking-at-p "0\\.10"))
            (arcology-oracle-similar-next)
            (should (looking-at-p "0\\.35")))))
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))
    (delete-other-windows)))

(ert-deftest arcology-oracle-firstday-test-note-fits-a-narrow-window ()
  "In a 24-column side window the note under the header is read whole: it was
inserted on one line, so Emacs cut \"(keyword matches: embeddings are not ready)\"
at the edge with $.  So is the header's title, which was cut the same way."
  (unwind-protect
      (progn
        (display-buffer (arcology-oracle--similar-buffer)
                        '(display-buffer-in-side-window (side . right) (window-width . 24)))
        (arcology-oracle--similar-render
         nil "Bread Hydration and its percentages"
         '(((node_id . "b") (title . "Rye") (heading . "Rye") (score . 0.35) (snippet . "Rye")))
         "(keyword matches: embeddings are not ready)")
        (with-current-buffer arcology-oracle-similar-buffer-name
          (let* ((width (window-width (get-buffer-window (current-buffer))))
                 (text (buffer-substring-no-properties (point-min) (point-max))))
            (should (<= width 24))
            ;; Every line, the header's title included: it goes on over two lines.
            (should (cl-every (lambda (line) (< (string-width line) width)) (split-string text "\n")))
            (should (equal (arcology-oracle-test--similar-header)
                           "Similar to: Bread Hydration and its percentages"))
            (should (string-match-p "embeddings are not\\(?: \\|\n\\)ready)" text))
            (should (equal (get-text-property (point-min) 'arcology-oracle-title)
                           "Bread Hydration and its percentages")))))
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))
    (delete-other-windows)))

(ert-deftest arcology-oracle-firstday-test-keyword-note-keeps-the-pull-whole ()
  "The embedder's failure was cut at 160 characters in the keyword matches' note:
with a long host and model name, the pull command that ends it was cut.  Kept
whole when it ends with that command, other failures still cut."
  (let* ((model "hf.co/nomic-ai/nomic-embed-text-v1.5-GGUF:Q8_0")
         (words (format "Ollama at http://gpu-box.tail1234abcd.ts.net:11434 has no model '%s' (model \"%s\" not found, try pulling it first); try `ollama pull %s`"
                        model model model))
         (note (arcology-oracle--keyword-note-text
                `((embedder (model . ,model) (error . ,words)) (pending . 0)))))
    (should (> (length words) 160))
    (should (equal note (format "(keyword matches: the embedder fails: %s)" words)))
    (should (string-match-p "…)\\'"
                            (arcology-oracle--keyword-note-text
                             `((embedder (model . ,model) (error . ,(make-string 300 ?x)))))))))

(ert-deftest arcology-oracle-firstday-test-w-says-what-it-copied-by-title ()
  "w in the similar notes copies the link and names the note by its title (the
echo area showed the raw [[id:...][...]])."
  (unwind-protect
      (let ((kill-ring nil))
        (arcology-oracle--similar-render
         nil "Here" '(((node_id . "36fb47dd-e96a-4b44-80ce-b246a771f11d") (title . "Bread Hydration")
                       (heading . "Bread Hydration") (score . 0.35) (snippet . "Water and flour"))))
        (with-current-buffer arcology-oracle-similar-buffer-name
          (goto-char (point-min))
          (arcology-oracle-similar-next)
          (arcology-oracle-test--capturing-messages messages
            (call-interactively (key-binding (kbd "w")))
            (should (equal (car kill-ring) "[[id:36fb47dd-e96a-4b44-80ce-b246a771f11d][Bread Hydration]]"))
            (should (equal (car messages) "Copied the link to \"Bread Hydration\" (C-y pastes it)")))))
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))))

(ert-deftest arcology-oracle-firstday-test-weak-scores-are-marked-and-tab-moves ()
  "A result above the cut-off but under `arcology-oracle-weak-score' is dimmed and
marked weak; a strong one is not.  TAB and S-TAB move between entries, as in the
org-roam buffer, instead of signalling that the buffer is read-only."
  (unwind-protect
      (progn
        (arcology-oracle--similar-render
         nil "Here" '(((node_id . "a") (title . "Strong") (heading . "Strong") (score . 0.35) (snippet . "Strong"))
                      ((node_id . "b") (title . "Faint") (heading . "Faint") (score . 0.05) (snippet . "Faint"))
                      ((node_id . "d") (title . "Copy") (heading . "Copy") (score . 0.3) (snippet . "Copy") (links_here . t))
                      ((node_id . "c") (title . "Gone") (heading . "Gone") (score . 0.01) (below_cutoff . t))))
        (with-current-buffer arcology-oracle-similar-buffer-name
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (should (string-match-p "^0\\.35  Strong$" text))
            (should (string-match-p "^0\\.05  Faint weak$" text))
            ;; The daemon says it links here (a capture's :SOURCE:, which org-roam credits to its file).
            (should (string-match-p "^0\\.30  Copy links here$" text)))
          (goto-char (point-min))
          (search-forward "0.05")
          (should (eq (get-text-property (match-beginning 0) 'face) 'shadow))
          (goto-char (point-min))
          (call-interactively (key-binding (kbd "TAB")))
          (should (looking-at-p "0\\.35  Strong"))
          (call-interactively (key-binding (kbd "TAB")))
          (should (looking-at-p "0\\.05  Faint"))
          (call-interactively (key-binding (kbd "<backtab>")))
          (should (looking-at-p "0\\.35  Strong")))
        ;; In keyword mode the scores are the words' match, not a chance of a link: never weak.
        (arcology-oracle--similar-render
         nil "Here" (arcology-oracle--results-of
                     '((mode . "keyword") (results ((node_id . "b") (title . "Faint") (heading . "Faint") (score . 0.05))))
                     'results))
        (with-current-buffer arcology-oracle-similar-buffer-name
          (should (string-match-p "^0\\.05  Faint$" (buffer-string)))))
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))))

(ert-deftest arcology-oracle-firstday-test-similar-asks-for-the-tail ()
  "The similar notes are asked for with all=true, so that the tail can be shown."
  (with-temp-buffer
    (org-mode)
    (insert "* Heading\ntext\n")
    (let ((args (arcology-oracle--similar-request-args (arcology-oracle--heading-context) nil)))
      (should (eq (alist-get 'all (nth 3 args)) t)))))

(ert-deftest arcology-oracle-firstday-test-search-candidates ()
  "Search candidates name the path once; answers and turns are marked; no repeated snippet."
  (let ((candidates (arcology-oracle--search-candidates
                     '(((title . "Starter maintenance") (olp "Starter maintenance")
                        (heading . "Feeding schedule") (snippet . "Feed it twice a day."))
                       ((title . "Starter maintenance") (heading . "Starter maintenance")
                        (snippet . "Starter maintenance") (role . "oracle"))))))
    (should (equal (mapcar #'car candidates)
                   '("Starter maintenance › Feeding schedule" "Starter maintenance")))
    (should (equal (substring-no-properties (arcology-oracle--search-annotation (cdr (nth 0 candidates))))
                   "  Feed it twice a day."))
    (should (equal (substring-no-properties (arcology-oracle--search-annotation (cdr (nth 1 candidates))))
                   "  [oracle answer] "))))

;;;; Sources and answers (item 8)

(ert-deftest arcology-oracle-firstday-test-source-opens-its-heading ()
  "Following a source opens its heading, by file and line when org-roam does not know its ID."
  (arcology-oracle-test--with-daemon
    (let ((arcology-oracle-roam-directory (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
      (dolist (node '("adda0990-28e8-487f-ae0a-eda5a8987581" "not-yet-synced-id"))
        (with-current-buffer (arcology-oracle--answer-buffer)
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert "* Q\n** Sources\n"
                    (arcology-oracle--format-sources
                     `(((n . 1) (node_id . ,node) (title . "Sourdough Baking")
                        (heading . "Reviving a sluggish starter") (olp "Starter maintenance")
                        (file . "sourdough-baking.org") (line . 29)))))
            (switch-to-buffer (current-buffer))
            (goto-char (point-min))
            (search-forward "[[id:")))
        (set-buffer arcology-oracle-answer-buffer-name)
        (org-open-at-point)
        (set-buffer (window-buffer))
        (goto-char (window-point))
        (push (current-buffer) arcology-oracle-test--buffers)
        (should (equal (file-name-nondirectory buffer-file-name) "sourdough-baking.org"))
        (should (looking-at-p "\\*\\* Reviving a sluggish starter"))))))

(ert-deftest arcology-oracle-firstday-test-cited-source-opens ()
  "A conversation answer's `- [N]' line opens the Nth source of its SOURCES property."
  (let ((arcology-oracle-roam-directory (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
        (conversation (generate-new-buffer "conversation.org")))
    (push conversation arcology-oracle-test--buffers)
    (with-current-buffer conversation
      (insert "* Chat :conversation:\n** Me\nHow wet?\n** Oracle\n:PROPERTIES:\n:ROLE:     oracle\n"
              ":SOURCES:  36fb47dd-e96a-4b44-80ce-b246a771f11d file:bread-hydration.org::29\n:END:\n"
              "Wet [1] [2].\n\nSources:\n- [1] Bread Hydration\n- [2] Bread Hydration: High hydration doughs\n")
      (org-mode)
      (add-hook 'org-open-at-point-functions #'arcology-oracle--open-cited-source nil t)
      (goto-char (point-min))
      (search-forward "- [1]")
      (should (equal (arcology-oracle--cited-source-at-point)
                     '((heading_id . "36fb47dd-e96a-4b44-80ce-b246a771f11d")
                       (node_id . "36fb47dd-e96a-4b44-80ce-b246a771f11d"))))
      (search-backward "Wet")
      (should-not (arcology-oracle--cited-source-at-point))
      (should-error (arcology-oracle-visit-cited-source) :type 'user-error)
      (search-forward "- [2]")
      (switch-to-buffer conversation)
      (org-open-at-point))
    (set-buffer (window-buffer))
    (goto-char (window-point))
    (push (current-buffer) arcology-oracle-test--buffers)
    (should (equal (file-name-nondirectory buffer-file-name) "bread-hydration.org"))
    (should (looking-at-p "\\* High hydration doughs"))))

(ert-deftest arcology-oracle-firstday-test-cited-heading-opens-before-org-roam-knows-it ()
  "A source written as `ID::REL::LINE' opens at its heading, though org-roam knows no such ID.
With only the node's ID, a source opened at the top of its note, and
one org-roam had not synced yet did not open at all."
  (let ((arcology-oracle-roam-directory (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))
        (conversation (generate-new-buffer "conversation.org")))
    (push conversation arcology-oracle-test--buffers)
    (should (equal (arcology-oracle--cited-target "n%3A%3A1::my%20notes/d%C3%ADa%201.org::7")
                   '((node_id . "n::1") (file . "my notes/día 1.org") (line . 7))))
    (with-current-buffer conversation
      (insert "* Chat :conversation:\n** Me\nHow?\n** Oracle\n:PROPERTIES:\n:ROLE:     oracle\n"
              ;; The note has grown above the heading since the answer: line 27, not 29.
              ":SOURCES:  dddddddd-0000-4000-8000-00000000dead::sourdough-baking.org::27\n:END:\n"
              "Feed it [1].\n\nSources:\n- [1] Sourdough Baking: Reviving a sluggish starter\n")
      (org-mode)
      (goto-char (point-max))
      (forward-line -1)
      (switch-to-buffer conversation)
      (arcology-oracle-visit-cited-source))
    (set-buffer (window-buffer))
    (goto-char (window-point))
    (push (current-buffer) arcology-oracle-test--buffers)
    (should (equal (file-name-nondirectory buffer-file-name) "sourdough-baking.org"))
    (should (looking-at-p "\\*\\* Reviving a sluggish starter"))))

(ert-deftest arcology-oracle-firstday-test-a-sources-line-of-the-answers-buffer-is-a-cited-source ()
  "`arcology-oracle-visit-cited-source' takes the link on an answers buffer's `- [N]' line."
  (with-temp-buffer
    (insert "** Sources\n- [1] " (propertize "[[id:x][Baker's percentages]]" 'arcology-oracle-source '((node_id . "x"))) "\n")
    (org-mode)
    (forward-line -1)
    (should (equal (arcology-oracle--cited-source-at-point) '((node_id . "x"))))))

(ert-deftest arcology-oracle-firstday-test-ret-and-c-c-c-o-anywhere-on-a-source-line ()
  "In the answers buffer, RET and C-c C-o at the start of a `- [N]' line open its source
(a newcomer moving down with C-n lands there), not the heading the question came from."
  (let (visited)
    (cl-letf (((symbol-function 'arcology-oracle--visit) (lambda (source) (push source visited))))
      (with-temp-buffer
        (arcology-oracle-answers-mode)
        (let ((inhibit-read-only t))
          (insert "* Why rye?\nBecause [1].\n** Sources\n- [1] "
                  (propertize "[[id:x][Baker's percentages]]" 'arcology-oracle-source '((node_id . "x"))) "\n"))
        (goto-char (point-min))
        (search-forward "- [1]")
        (beginning-of-line)
        (call-interactively (key-binding (kbd "RET")))
        (should (equal visited '(((node_id . "x")))))
        (org-open-at-point)
        (should (equal visited '(((node_id . "x")) ((node_id . "x")))))))))

(ert-deftest arcology-oracle-firstday-test-going-back-reuses-the-note-s-window ()
  "Going back from an answer to the note it was asked from selects the note's window
where it is shown, instead of showing it a second time in another window."
  (let ((note (generate-new-buffer "note.org"))
        (answers (generate-new-buffer "*answers*"))
        (third (generate-new-buffer "*other*")))
    (unwind-protect
        (progn
          (delete-other-windows)
          (switch-to-buffer note)
          (insert "* Rye\nText.\n")
          (org-mode)
          (let ((origin (progn (goto-char (point-min)) (arcology-oracle--origin)))
                (note-window (selected-window)))
            ;; The note beside another window, the answers below both (as with the
            ;; org-roam buffer and the side windows); the note's window used last but one.
            (select-window (split-window-below))
            (switch-to-buffer answers)
            (select-window (split-window note-window nil 'right))
            (switch-to-buffer third)
            (select-window note-window)
            (select-window (get-buffer-window answers))
            (arcology-oracle--visit-origin origin)
            (should (eq (selected-window) note-window))
            (should (= 1 (length (get-buffer-window-list note nil t))))
            (should (get-buffer-window third))))
      (delete-other-windows)
      (mapc #'kill-buffer (list note answers third)))))

(ert-deftest arcology-oracle-firstday-test-answers-say-when-and-summaries-stay ()
  "An answer says its time and model; summaries stay, newest first, the cached one marked."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "bread-hydration.org")
    (arcology-oracle-ask "What is hydration?")
    (arcology-oracle-test--settled 30)
    (with-current-buffer arcology-oracle-answer-buffer-name
      (should (string-match-p "\\`\\* What is hydration\\?\n\\[[0-9-]+ [[:alpha:]]+ [0-9:]+\\] · [^ \n]+\n"
                              (buffer-string))))
    (arcology-oracle-test--goto-heading "Autolyse")
    (arcology-oracle-summarize)
    (arcology-oracle-test--settled 30)
    (arcology-oracle-summarize)
    (arcology-oracle-test--settled 30)
    (with-current-buffer arcology-oracle-summary-buffer-name
      (let ((text (buffer-string)))
        ;; Autolyse has no ID: its node, Bread Hydration, is summarized.
        (should (= 2 (cl-count-if (lambda (l) (string-prefix-p "* Summary of Bread Hydration" l))
                                  (split-string text "\n"))))
        ;; The newest (the cached one) first.
        (should (string-match-p "\\`\\* Summary of Bread Hydration\n\\[[^]]+\\] · [^\n]+ · cached" text))
        (should (= 1 (cl-count-if (lambda (l) (string-match-p "· cached" l)) (split-string text "\n"))))))))

(ert-deftest arcology-oracle-firstday-test-similar-mode-off-takes-the-list-away ()
  "C-c o m turning the mode off left the side window showing the last heading's
notes, no longer updated, as if they were still followed.  Off in the note the list is
about, the window goes; off in another buffer, the list stays."
  (arcology-oracle-test--with-daemon
    (unwind-protect
        (let ((source (arcology-oracle-test--visit "bread-hydration.org")))
          (arcology-oracle-test--goto-heading "Baker's percentages")
          (arcology-oracle-similar-show)
          (arcology-oracle-test--wait (lambda () (arcology-oracle-test--listed)) 20 "similar notes")
          (should (arcology-oracle--similar-visible-p))
          (with-temp-buffer
            (org-mode)
            (arcology-oracle-similar-mode 1)
            (arcology-oracle-similar-mode -1))
          (should (arcology-oracle--similar-visible-p))
          (with-current-buffer source (arcology-oracle-similar-mode -1))
          (should-not (arcology-oracle--similar-visible-p))
          (should (eq (window-buffer (selected-window)) source)))
      (delete-other-windows)
      (when (get-buffer arcology-oracle-similar-buffer-name)
        (kill-buffer arcology-oracle-similar-buffer-name)))))

(provide 'arcology-oracle-firstday-test)

;;; arcology-oracle-firstday-test.el ends here
