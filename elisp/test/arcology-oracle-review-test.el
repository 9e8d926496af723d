;;; arcology-oracle-review-test.el --- ERT tests of a first day's review in Emacs -*- lexical-binding: t -*-

;;; Commentary:

;; What a reviewer following the README met on a first day, with the
;; fixtures of arcology-oracle-test.el (tests/elisp/test_elisp.py runs
;; every ERT file against the real daemon and the fake Ollama):
;;
;; - a summary's heading names what was summarized: the node around
;;   point, or the file;
;; - a summary that cannot be made (an unsaved buffer, a file that is
;;   not among the notes, a buffer that is not Org) is refused, and
;;   the summaries buffer keeps no entry for it;
;; - the :SOURCE: link of a capture opens its heading, whatever the
;;   heading holds (statistics cookies, links, TODO, priority, tags);
;; - `C-c o s' pressed again beside a plain org-roam window reuses
;;   the similar notes window;
;; - `C-c o P' before the first heading tags the file (#+filetags);
;; - a daemon that cannot be reached costs one wait, and the message
;;   says what happened;
;; - mouse-1 visits an entry of the similar notes; titles shown lose
;;   their statistics cookies.
;; - the rejections of a note are headed by its title, the daemon
;;   stopped or not;
;; - the org-roam section's entries fit its window, marks included.
;;
;; The HTTP client's messages for a server that is not the daemon are
;; tested on its own, in arcology-oracle-http-test.el.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-memory)
(require 'arcology-oracle-test-support)
(require 'arcology-oracle-test)

(defvar org-roam-directory)

;;;; The summary's heading names what was summarized

(defun arcology-oracle-review-test--summary (rel heading)
  "Summarize at HEADING of REL in the roam directory; return the summaries buffer's text."
  (arcology-oracle-test--visit rel)
  (arcology-oracle-test--goto-heading heading)
  (arcology-oracle-summarize)
  (arcology-oracle-test--wait
   (lambda () (and (get-buffer arcology-oracle-summary-buffer-name)
                   (with-current-buffer arcology-oracle-summary-buffer-name
                     (string-match-p "^\\*\\* Sources" (buffer-string)))))
   30 "the summary")
  (arcology-oracle-test--settled 30)
  (prog1 (with-current-buffer arcology-oracle-summary-buffer-name
           (buffer-substring-no-properties (point-min) (point-max)))
    (kill-buffer arcology-oracle-summary-buffer-name)))

(ert-deftest arcology-oracle-review-test-summary-heading-names-the-node ()
  "A heading without an ID is summarized as its node, and the summary says so."
  (arcology-oracle-test--with-daemon
    ;; ** Feeding schedule has no ID: its node is Starter maintenance.
    (let ((text (arcology-oracle-review-test--summary "sourdough-baking.org" "Feeding schedule")))
      (should (string-prefix-p "* Summary of Starter maintenance\n" text))
      (should (string-match-p "^- \\[1\\] \\[\\[id:612f2887-9442-410d-b965-d901189a423b\\]\\[Starter maintenance\\]\\]"
                              text)))
    ;; inbox.org has a #+title and no ID at all: the file is summarized.
    (let ((text (arcology-oracle-review-test--summary "inbox.org" "Buy rye flour")))
      (should (string-prefix-p "* Summary of Inbox\n" text))
      (should-not (string-match-p "Failed" text)))))

(ert-deftest arcology-oracle-review-test-summary-from-an-indirect-buffer ()
  "C-x 4 c on a note without an ID, then C-c o u: the file is summarized, as
from the note's own buffer (it said \"No org-roam node at point\": an indirect
buffer visits no file itself)."
  (arcology-oracle-test--with-daemon
    (let* ((base (arcology-oracle-test--visit "inbox.org"))
           (indirect (clone-indirect-buffer "inbox.org (subtree)" nil)))
      (push indirect arcology-oracle-test--buffers)
      (switch-to-buffer indirect)
      (arcology-oracle-test--goto-heading "Buy rye flour")
      (should-not (eq (current-buffer) base))
      (arcology-oracle-summarize)
      (let ((text (arcology-oracle-test--wait
                   (lambda () (and (get-buffer arcology-oracle-summary-buffer-name)
                                   (with-current-buffer arcology-oracle-summary-buffer-name
                                     (let ((text (buffer-substring-no-properties (point-min) (point-max))))
                                       (and (string-match-p "^\\*\\* Sources\\|Failed" text) text)))))
                   30 "the summary")))
        (arcology-oracle-test--settled 30)
        (kill-buffer arcology-oracle-summary-buffer-name)
        (should (string-prefix-p "* Summary of Inbox\n" text))
        (should-not (string-match-p "Failed" text))))))

(ert-deftest arcology-oracle-review-test-converse-in-a-narrowed-buffer ()
  "C-x n s on the conversation, or on its last turn, then C-c o c: the answer is
in sight, with point on it; one undo takes it back (it went past the narrowed
part's end, out of sight, while the echo area said \"answered\")."
  (arcology-oracle-test--with-daemon
    (let ((text (concat "#+title: Chats\n\n* Rye :conversation:\n** Me\n"
                        "How much rye flour should a starter get?\n\n* Other notes\nElse.\n")))
      (dolist (narrow-to '("^\\* Rye" "^\\*\\* Me"))
        (let ((buffer (arcology-oracle-test--conversation text)))
          (goto-char (point-min))
          (re-search-forward narrow-to)
          (org-narrow-to-subtree)
          (forward-line 1)
          (arcology-oracle-converse)
          (with-current-buffer buffer
            (arcology-oracle-test--wait (lambda () (save-restriction
                                                     (widen)
                                                     (string-match-p "^\\*\\* Oracle" (buffer-string))))
                                        30 "the answer")
            (should (buffer-narrowed-p))
            (should (string-match-p "^\\*\\* Oracle$" (buffer-string)))  ; in the narrowed part
            (should (looking-at-p "\\*\\* Oracle$"))
            (should-not (string-match-p "Other notes" (buffer-string)))
            (let ((last-command nil)) (undo))
            (should (equal (save-restriction (widen) (buffer-string)) text))))))))

(ert-deftest arcology-oracle-review-test-converse-typed-below-a-private-heading ()
  "C-c o c on a conversation typed, not saved yet, at the end of a note whose last
heading is private (emacs-config.org ends with a :crypt: subtree): answered.  Its
line, sent as if saved, fell in that subtree of the saved file, and the daemon
refused it: \"the conversation is private: emacs-config.org at line 63 is in a
private part of the notes\".  Saved, it was answered."
  (arcology-oracle-test--with-daemon
    (let ((buffer (arcology-oracle-test--visit "emacs-config.org"))
          (messages nil))
      (goto-char (point-max))
      (insert "\n* Keys :conversation:\n** Me\nWhich key opens the org-roam buffer?\n")
      (cl-letf (((symbol-function 'arcology-oracle--report) (lambda (m) (push m messages))))
        (arcology-oracle-converse)
        (arcology-oracle-test--wait
         (lambda () (or messages (with-current-buffer buffer
                                   (string-match-p "^\\*\\* Oracle$" (buffer-string)))))
         30 "the answer or a refusal"))
      (should-not messages)
      (with-current-buffer buffer
        (should (string-match-p "^\\*\\* Me\nWhich key opens the org-roam buffer\\?\n\\*\\* Oracle\n"
                                (buffer-string)))))))

(ert-deftest arcology-oracle-review-test-summarize-a-node-with-unsaved-edits ()
  "C-c o u on a node of a note with unsaved edits says the summary is of the note as
saved: it said nothing, and the summary, of the saved text, read as if of the edits."
  (arcology-oracle-test--with-daemon
    (arcology-oracle-test--visit "bread-hydration.org")
    (arcology-oracle-test--goto-heading "Baker's percentages")
    (cl-letf (((symbol-function 'arcology-oracle--http-request) #'ignore))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-summarize)
        (should-not (seq-some (lambda (m) (string-match-p "as saved" m)) messages)))
      (save-excursion (org-end-of-subtree) (insert " Salt is two percent."))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-summarize)
        (should (member "arcology-oracle: Baker's percentages is summarized as saved: \
save bread-hydration.org to include your edits" messages))))))

(ert-deftest arcology-oracle-review-test-visit-a-note-deleted-since ()
  "RET on a source whose note was deleted (or moved) outside Emacs since: a
message says so, and no buffer is made (org-roam's database still had the node,
and RET opened an empty \"(New file)\" buffer of that name)."
  (let* ((roam (make-temp-file "arcology-oracle-roam" t))
         (gone (expand-file-name "pan.org" roam))
         (arcology-oracle-roam-directory roam))
    (unwind-protect
        (cl-letf (((symbol-function 'org-roam-node-from-id) (lambda (_id) 'a-node))
                  ((symbol-function 'org-roam-node-file) (lambda (_node) gone))
                  ((symbol-function 'org-roam-node-point) (lambda (_node) 1)))
          (let ((err (should-error
                      (arcology-oracle--visit '((heading_id . "aaaa0000-1111-2222-3333-444455556666")
                                                (node_id . "aaaa0000-1111-2222-3333-444455556666")
                                                (file . "pan.org") (line . 6) (title . "Pan")))
                      :type 'user-error)))
            (should (equal (cadr err)
                           (format "pan.org is not in %s any more: deleted or moved since it was listed"
                                   (file-name-as-directory roam)))))
          (should-not (find-buffer-visiting gone)))
      (delete-directory roam t))))

(ert-deftest arcology-oracle-review-test-ask-from-the-similar-notes-asks-about-the-note ()
  "C-c o a with point in the similar notes window asks about the note the list
is for, at its heading (it sent the list itself, \"Similar to: ... 0.10 ...\", as
the text the question was about, and its prompt said \"this buffer\")."
  (arcology-oracle-test--with-daemon
    (let ((note (arcology-oracle-test--visit "gardening-tomatoes.org"))
          (payload nil))
      (arcology-oracle-test--goto-heading "Blight and diseases")
      (unwind-protect
          (progn
            (arcology-oracle-similar-show)
            (arcology-oracle-test--wait
             (lambda () (with-current-buffer arcology-oracle-similar-buffer-name
                          (string-match-p "^0\\." (buffer-string))))
             20 "the similar notes")
            (with-current-buffer arcology-oracle-similar-buffer-name
              (should (equal (arcology-oracle--listed-note) note))
              (cl-letf* ((orig (symbol-function 'arcology-oracle--stream-answer))
                         ((symbol-function 'arcology-oracle--stream-answer)
                          (lambda (marker path body)
                            (setq payload body)
                            (funcall orig marker path body))))
                (arcology-oracle-ask "What about blight?")
                (arcology-oracle-test--wait (lambda () payload))))
            (should (equal (alist-get 'file payload) "gardening-tomatoes.org"))
            (should (string-match-p "Blight and diseases" (alist-get 'buffer payload)))
            (should-not (string-match-p "Similar to:" (alist-get 'buffer payload)))
            (with-current-buffer arcology-oracle-answer-buffer-name
              (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string)))
                                          30 "the answer"))
            ;; C-c o u and C-c o l there are about the note too (they said the
            ;; similar notes were not an org-mode buffer).
            (with-current-buffer arcology-oracle-similar-buffer-name
              (arcology-oracle-summarize))
            (with-current-buffer arcology-oracle-summary-buffer-name
              (arcology-oracle-test--wait (lambda () (string-match-p "^\\*\\* Sources" (buffer-string)))
                                          30 "the summary")
              (should (string-prefix-p "* Summary of Blight and diseases\n" (buffer-string))))
            (with-current-buffer arcology-oracle-similar-buffer-name
              (arcology-oracle-suggest-links))
            (arcology-oracle-test--settled 30)
            (with-current-buffer arcology-oracle-links-buffer-name
              (should (string-prefix-p "Links to add to: Blight and diseases\n" (buffer-string)))))
        (arcology-oracle-test--settled 30)
        (dolist (name (list arcology-oracle-similar-buffer-name arcology-oracle-answer-buffer-name
                            arcology-oracle-summary-buffer-name arcology-oracle-links-buffer-name))
          (when (get-buffer name) (kill-buffer name)))))))

;;;; A summary that cannot be made is refused, and leaves no entry

(defun arcology-oracle-review-test--entries ()
  "Return the number of entries of the summaries buffer (0 when there is none)."
  (if-let ((buffer (get-buffer arcology-oracle-summary-buffer-name)))
      (with-current-buffer buffer
        (count-matches "^\\* " (point-min) (point-max)))
    0))

(defmacro arcology-oracle-review-test--refused (regexp &rest body)
  "Run BODY, which must signal a `user-error' matching REGEXP and send nothing."
  (declare (indent 1) (debug (form body)))
  `(let ((sent nil))
     (cl-letf (((symbol-function 'arcology-oracle--http-request)
                (lambda (&rest args) (push args sent) nil)))
       (let ((err (should-error (progn ,@body) :type 'user-error)))
         (should (string-match-p ,regexp (cadr err)))))
     (should-not sent)
     (should (= (arcology-oracle-review-test--entries) 0))))

(ert-deftest arcology-oracle-review-test-summarize-refuses-what-it-cannot-summarize ()
  "Unsaved, never saved, not Org: a clear refusal, and no entry in the summaries."
  (arcology-oracle-test--with-daemon
    (let ((roam (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
      ;; An indexed file without an ID, edited: the daemon summarizes files as saved.
      (arcology-oracle-test--visit "inbox.org")
      (arcology-oracle-test--goto-heading "Buy rye flour")
      (end-of-line)
      (insert " and spelt")
      (arcology-oracle-review-test--refused "\\`Save inbox\\.org first"
        (arcology-oracle-summarize))
      ;; A new note in the roam directory, not saved yet (it has an ID, as org-roam's
      ;; capture gives it): the daemon cannot know it.
      (let ((buffer (find-file-noselect (expand-file-name "brand-new-note.org" roam))))
        (push buffer arcology-oracle-test--buffers)
        (with-current-buffer buffer
          (insert ":PROPERTIES:\n:ID: 5e1f0000-0000-4000-8000-00000000abcd\n:END:\n"
                  "#+title: Brand new\n\n* First thoughts\nNot saved yet.\n")
          (goto-char (point-max))
          (arcology-oracle-review-test--refused "\\`Save brand-new-note\\.org first"
            (arcology-oracle-summarize))))
      ;; Not Org (a text file outside the notes): refused as the other commands refuse.
      (with-temp-buffer
        (text-mode)
        (setq buffer-file-name (expand-file-name "notes.txt" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))
        (insert "plain text\n")
        (set-buffer-modified-p nil)
        (unwind-protect
            (arcology-oracle-review-test--refused "need an Org buffer"
              (arcology-oracle-summarize))
          (setq buffer-file-name nil)))
      ;; The oracle's own words kept as a note of their own, as a heading or as a file
      ;; whose drawer says so: not the user's notes (the daemon refuses them too; the
      ;; summaries get no failed entry for them).
      (pcase-dolist (`(,name ,text ,refusal)
                     '(("kept-answer.org"
                        "#+title: Day\n* Based on your notes [1]\n:PROPERTIES:\n:ID: 5e1f0000-0000-4000-8000-00000000abce\n:ROLE: oracle\n:END:\nThe answer.\n"
                        "is the oracle.s own answer, not your notes")
                       ("kept-summary.org"
                        ":PROPERTIES:\n:ID: 5e1f0000-0000-4000-8000-00000000abcf\n:ROLE: oracle\n:END:\n#+title: Kept summary\n\nThe summary.\n"
                        "Kept summary is the oracle.s own answer")))
        (let ((file (expand-file-name name (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP"))))
          (write-region text nil file)
          (let ((buffer (find-file-noselect file)))
            (push buffer arcology-oracle-test--buffers)
            (with-current-buffer buffer
              (goto-char (point-max))
              (arcology-oracle-review-test--refused refusal
                (arcology-oracle-summarize)))))))))

(ert-deftest arcology-oracle-review-test-summarize-outside-the-notes ()
  "A saved org file outside the roam directory, without an ID or with one: a message,
no entry.  With an ID the summaries got \"[Failed: no node with ID '5e1f...' in the
index (HTTP 404)]\"."
  (arcology-oracle-test--with-daemon
    (let ((dir (expand-file-name "elsewhere" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP"))))
      (make-directory dir t)
      (pcase-dolist (`(,name ,text)
                     '(("outside.org" "#+title: Outside\n\n* A heading\nText.\n")
                       ("outside-node.org"
                        ":PROPERTIES:\n:ID:       5e1f0000-0000-4000-8000-0000000000ee\n:END:\n#+title: Outside node\n\n* A heading\nText.\n")))
        (let ((file (expand-file-name name dir)))
          (with-temp-file file (insert text))
          (let ((buffer (find-file-noselect file)))
            (push buffer arcology-oracle-test--buffers)
            (switch-to-buffer buffer)
            (goto-char (point-max))
            (arcology-oracle-test--capturing-messages messages
              (arcology-oracle-summarize)
              (arcology-oracle-test--settled)
              (should (cl-find-if (lambda (m) (string-match-p (concat (regexp-quote name) " is not among the daemon's notes") m))
                                  messages)))
            (should (= (arcology-oracle-review-test--entries) 0))))))))

;; A note in a hidden folder of the roam directory (the daemon never reads it): the
;; similar notes said "no indexed heading at .hidden/h.org:5 (HTTP 404)", and C-c o u
;; added "[Failed: no node with ID '...' in the index (HTTP 404)]" to the summaries.
(ert-deftest arcology-oracle-review-test-a-note-in-a-hidden-folder ()
  "A note in a hidden folder of the notes: the similar notes, C-c o u and C-c o l say
the daemon does not read it, and nothing of it is sent."
  (arcology-oracle-test--with-daemon
    (let* ((dir (expand-file-name ".hidden" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
           (file (expand-file-name "h.org" dir))
           (text ":PROPERTIES:\n:ID:       5e1f0000-0000-4000-8000-0000000000ff\n:END:\n#+title: Hidden\n\n* A heading\nSourdough starter feeding.\n")
           sent)
      (make-directory dir t)
      (with-temp-file file (insert text))
      (unwind-protect
          (let ((buffer (find-file-noselect file)))
            (push buffer arcology-oracle-test--buffers)
            (switch-to-buffer buffer)
            (goto-char (point-max))
            (advice-add 'arcology-oracle--json :before
                        (lambda (_method path &rest _) (unless (equal path "/status") (push path sent)))
                        '((name . arcology-oracle-review-test-sent)))
            (arcology-oracle-similar-refresh)
            (arcology-oracle-test--wait
             (lambda () (with-current-buffer arcology-oracle-similar-buffer-name
                          (not (string-match-p "Looking for\\|Asking about" (buffer-string)))))
             20 "the similar notes' answer")
            (with-current-buffer arcology-oracle-similar-buffer-name
              (should (string-search "This note is not among the daemon's notes (the daemon does not read hidden \
folders or files): nothing of it is sent."
                                     (replace-regexp-in-string "\n" " " (buffer-string)))))
            (arcology-oracle-test--capturing-messages messages
              (arcology-oracle-summarize)
              (arcology-oracle-test--settled)
              (should (cl-find-if (lambda (m) (string-match-p "h\\.org is not among the daemon's notes (the daemon does not read hidden folders or files): nothing to summarize" m))
                                  messages)))
            (should (= (arcology-oracle-review-test--entries) 0))
            (should-not sent)
            (with-current-buffer buffer (should (equal (buffer-string) text))))
        (advice-remove 'arcology-oracle--json 'arcology-oracle-review-test-sent)
        (delete-directory dir t)))))

(ert-deftest arcology-oracle-review-test-nothing-sent-from-a-hidden-folder ()
  "An old version of a note that a sync tool keeps in .stversions: the daemon treats
its text as private, yet C-c o a, C-c o c and a region remembered sent it.  Each
is refused in Emacs with the reason the similar notes give, and nothing is sent."
  (arcology-oracle-test--with-daemon
    (let* ((dir (expand-file-name ".stversions" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
           (file (expand-file-name "old.org" dir))
           (text "#+title: Old\n\n* A conversation\n** Me\nHow long does the starter rest?\n")
           (said "old\\.org is not among the daemon's notes (the daemon does not read hidden folders or files)")
           sent)
      (make-directory dir t)
      (with-temp-file file (insert text))
      (unwind-protect
          (let ((buffer (find-file-noselect file)))
            (push buffer arcology-oracle-test--buffers)
            (switch-to-buffer buffer)
            (goto-char (point-max))
            (advice-add 'arcology-oracle--http-request :before
                        (lambda (_method path &rest _) (unless (equal path "/status") (push path sent)))
                        '((name . arcology-oracle-review-test-sent)))
            (dolist (do `((,(lambda () (arcology-oracle-ask "How long does it rest?")) . ": nothing was sent")
                          (,#'arcology-oracle-converse . ": nothing was sent")
                          (,(lambda () (arcology-oracle-memorize "How long does the starter rest?" nil nil nil nil nil
                                                                 file 5))
                           . ": nothing was sent")
                          (,#'arcology-oracle-summarize . ", and no org-roam node is at point: nothing to summarize")))
              (arcology-oracle-test--capturing-messages messages
                (funcall (car do))
                (arcology-oracle-test--settled)
                (should (cl-find-if (lambda (m) (string-match-p (concat said (cdr do)) m)) messages)))
              (should (equal (list (cdr do) sent) (list (cdr do) nil))))
            (with-current-buffer buffer (should (equal (buffer-string) text))))
        (advice-remove 'arcology-oracle--http-request 'arcology-oracle-review-test-sent)
        (delete-directory dir t)))))

;;;; A daemon restarted on other notes

(ert-deftest arcology-oracle-review-test-roam-directory-set-and-a-restart ()
  "With `arcology-oracle-roam-directory' set, a daemon restarted on the same notes
goes on being asked; one restarted on others is refused until the setting is set
again (to the same path too: the daemon may see the same notes under another)."
  (let ((arcology-oracle--configured-notes nil)
        (arcology-oracle-roam-directory "~/org/roam/")
        (url "http://127.0.0.1:9"))
    (should-not (arcology-oracle--stale-setting url "/srv/roam"))
    (should-not (arcology-oracle--stale-setting url "/srv/roam"))
    (should (string-match-p "restarted on other notes (/srv/other, not /srv/roam): nothing was done"
                            (arcology-oracle--stale-setting url "/srv/other")))
    (should (arcology-oracle--stale-setting url "/srv/other"))
    (let ((arcology-oracle-roam-directory "~/org/other/"))
      (should-not (arcology-oracle--stale-setting url "/srv/other")))
    (should-not (arcology-oracle--stale-setting url "/srv/roam"))
    (should (arcology-oracle--stale-setting url "/srv/moved"))
    ;; The same notes, mounted elsewhere for the daemon: this Emacs sees them where it
    ;; did; the refusal said to set the setting again, and setting it to the same path is that.
    (setq arcology-oracle-roam-directory "~/org/roam/")
    (should-not (arcology-oracle--stale-setting url "/srv/moved"))))

(ert-deftest arcology-oracle-review-test-a-daemon-restarted-on-other-notes ()
  "The roam directory a daemon said once is asked again when a note is not under it,
and when the daemon could not be reached: a daemon stopped and started on other notes
(the examples first, then one's own) says another.  Emacs kept the first for the
session, so C-c o u and C-c o l in one's own notes said 'porridge.org is not among the
daemon's notes (not under .../examples/roam/)'."
  (arcology-oracle-test--with-daemon
    (let ((old (file-name-as-directory (expand-file-name "old-notes" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP")))))
      (make-directory old t)
      ;; What the daemon said before its restart.
      (push (cons (arcology-oracle--base-url) old) arcology-oracle--server-roam-dirs)
      (arcology-oracle-test--visit "inbox.org")
      (goto-char (point-max))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-summarize)
        (arcology-oracle-test--wait
         (lambda () (or (> (arcology-oracle-review-test--entries) 0)
                        (cl-find-if (lambda (m) (string-match-p "not among" m)) messages)))
         20 "the summary or its refusal")
        (should-not (cl-find-if (lambda (m) (string-match-p "not among the daemon's notes" m)) messages)))
      (should (equal (arcology-oracle--roam-dir)
                     (file-name-as-directory (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM"))))
      ;; A daemon that cannot be reached: what it said is asked again once it is back.
      (push (cons "http://127.0.0.1:9" old) arcology-oracle--server-roam-dirs)
      (let ((arcology-oracle-url "http://127.0.0.1:9")
            (failed nil))
        (arcology-oracle--json "GET" "/status" :callback #'ignore :errback (lambda (_) (setq failed t)))
        (arcology-oracle-test--wait (lambda () failed) 20 "the refusal")
        (should-not (assoc "http://127.0.0.1:9" arcology-oracle--server-roam-dirs))))))

(ert-deftest arcology-oracle-review-test-a-result-of-a-daemon-restarted-on-other-notes ()
  "RET on a listed note that is not under the roam directory the daemon said before its
restart asks for the directory again, and visits it.  A daemon stopped and started on
other notes within a second (no request failed meanwhile) left the old directory, and
RET said 'bread.org is not in .../examples/roam/ any more: deleted or moved'."
  (arcology-oracle-test--with-daemon
    (let* ((old (file-name-as-directory (expand-file-name "old-notes" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_TMP"))))
           (file (expand-file-name "inbox.org" (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
           (refused nil))
      (make-directory old t)
      (push (cons (arcology-oracle--base-url) old) arcology-oracle--server-roam-dirs)
      (condition-case err
          (arcology-oracle--visit '((file . "inbox.org") (line . 1) (title . "Inbox")))
        (user-error (setq refused (error-message-string err))))
      (should-not refused)
      (arcology-oracle-test--wait (lambda () (get-file-buffer file)) 20 "the note visited")
      (push (get-file-buffer file) arcology-oracle-test--buffers)
      (should (eq (window-buffer (selected-window)) (get-file-buffer file))))))

;;;; The :SOURCE: link of a capture opens its heading

(defconst arcology-oracle-review-test--fancy
  (concat "#+title: Kitchen Projects\n\n"
          "* TODO [#A] Feed the [[id:612f2887-9442-410d-b965-d901189a423b][starter]] before baking [1/3] :baking:urgent:\n"
          "- [X] weigh the flour\n- [ ] warm the water\n- [ ] stir\n"
          "* TODO [#B] Clean the jar [1/2] :home:\n- [X] soak\n- [ ] scrub\n"
          "* COMMENT Old   ideas [50%]\nNothing.\n")
  "A note whose headings hold what Org leaves out of a link's search string.")

(defun arcology-oracle-review-test--follow (link)
  "Follow the org LINK (a string) from a scratch org buffer; return the line it lands on."
  (let ((org-link-frame-setup (cons '(file . find-file) org-link-frame-setup)))
    (with-temp-buffer
      (org-mode)
      (insert link)
      (goto-char 3)
      (save-window-excursion
        (org-open-at-point)
        (buffer-substring-no-properties (line-beginning-position) (line-end-position))))))

(ert-deftest arcology-oracle-review-test-source-link-opens-its-heading ()
  "The source link is the one `org-store-link' makes, and opens the heading."
  (let ((file (make-temp-file "fancy" nil ".org" arcology-oracle-review-test--fancy)))
    (unwind-protect
        (let ((buffer (find-file-noselect file)))
          (with-current-buffer buffer
            (dolist (case `(("Feed the"
                             ,(concat "*Feed the \\[\\[id:612f2887-9442-410d-b965-d901189a423b\\]"
                                      "\\[starter\\]\\] before baking")
                             "Kitchen Projects › Feed the starter before baking")
                            ("Clean the jar" "*Clean the jar" "Kitchen Projects › Clean the jar")
                            ("Old" "*Old ideas" "Kitchen Projects › Old ideas")))
              (goto-char (point-min))
              (search-forward (car case))
              (forward-line 1)          ; in the body: the heading above is the source
              (let ((link (arcology-oracle--memory-source (point)))
                    (heading (save-excursion (org-back-to-heading t)
                                             (buffer-substring-no-properties
                                              (point) (line-end-position)))))
                (should (equal link (format "[[file:%s::%s][%s]]" (abbreviate-file-name file)
                                            (nth 1 case) (nth 2 case))))
                (should (equal (arcology-oracle-review-test--follow link) heading)))))
          (kill-buffer buffer))
      (delete-file file))))

;;;; C-c o s again beside a plain org-roam window

(ert-deftest arcology-oracle-review-test-similar-again-beside-plain-org-roam-window ()
  "With org-roam's buffer in a plain window, a second `C-c o s' adds no window."
  (require 'org-roam)
  (arcology-oracle-test--with-daemon
    (let ((roam (get-buffer-create "*org-roam*")))
      (push roam arcology-oracle-test--buffers)
      (with-current-buffer roam (org-roam-mode))
      (arcology-oracle-test--visit "bread-hydration.org")
      (delete-other-windows)
      ;; As `org-roam-buffer-toggle' shows it by default: a window of its own, not a side one.
      (let* ((note-window (selected-window))
             (roam-window (split-window-right)))
        (set-window-buffer roam-window roam)
        (should-not (window-parameter roam-window 'window-side))
        (arcology-oracle-similar-show)
        (arcology-oracle-test--settled)
        (let ((similar (get-buffer-window arcology-oracle-similar-buffer-name))
              (windows (window-list nil 'never)))
          (should similar)
          (should (= (length windows) 3))
          (arcology-oracle-similar-show)
          (arcology-oracle-test--settled)
          (should (equal (window-list nil 'never) windows))
          (should (eq (get-buffer-window arcology-oracle-similar-buffer-name) similar))
          (should (= 1 (length (get-buffer-window-list arcology-oracle-similar-buffer-name nil t))))
          (should (eq (window-buffer note-window) (get-file-buffer buffer-file-name))))))))

;;;; C-c o P before the first heading tags the file

(defun arcology-oracle-review-test--make-private (text where)
  "Run `arcology-oracle-make-private' in an org buffer holding TEXT, point after WHERE.
Return the buffer's text afterwards."
  (with-temp-buffer
    (insert text)
    (org-mode)
    (goto-char (point-min))
    (search-forward where)
    (let ((arcology-oracle-private-tags '("private" "secret")))
      (arcology-oracle-make-private)
      ;; Point stays where it was in the text.
      (should (looking-back (regexp-quote where) (line-beginning-position)))
      ;; Read back by Org in this buffer: the file's tags, the place private.
      (should (member "private" org-file-tags))
      (should (arcology-oracle--private-here-p)))
    (buffer-substring-no-properties (point-min) (point-max))))

(defun arcology-oracle-review-test--file-tags (text)
  "Return the file tags Org reads in TEXT, in a fresh buffer."
  (with-temp-buffer
    (insert text)
    (org-mode)
    (mapcar #'substring-no-properties org-file-tags)))

(defun arcology-oracle-review-test--file-id (text)
  "Return the ID of the file-level property drawer Org reads in TEXT."
  (with-temp-buffer
    (insert text)
    (org-mode)
    (org-entry-get (point-min) "ID")))

(ert-deftest arcology-oracle-review-test-make-private-before-the-first-heading ()
  "Before the first heading, the file is tagged in #+filetags; every other byte stays."
  (dolist (case
           '(;; org-roam's file node with tags: one more tag at the end of the line.
             (":PROPERTIES:\n:ID:       adda0990\n:END:\n#+title: Sourdough Baking\n#+filetags: :baking:bread:\n\nMy notes.\n* A\n"
              "My notes"
              ":PROPERTIES:\n:ID:       adda0990\n:END:\n#+title: Sourdough Baking\n#+filetags: :baking:bread:private:\n\nMy notes.\n* A\n"
              ("baking" "bread" "private"))
             ;; Tags written with spaces, trailing blanks kept after the new tag.
             ("#+TITLE: X\n#+FILETAGS: alpha beta  \n* A\n" "X"
              "#+TITLE: X\n#+FILETAGS: alpha beta :private:  \n* A\n" ("alpha" "beta" "private"))
             ;; No #+filetags: a line after the #+title, in its letter case.
             (":PROPERTIES:\n:ID: f00\n:END:\n#+title: Kitchen\n\nText.\n* A\n" ":ID:"
              ":PROPERTIES:\n:ID: f00\n:END:\n#+title: Kitchen\n#+filetags: :private:\n\nText.\n* A\n" ("private"))
             ("#+TITLE: Kitchen\nText.\n" "Text"
              "#+TITLE: Kitchen\n#+FILETAGS: :private:\nText.\n" ("private"))
             ;; A mode line stays the first line.
             ("# -*- mode: org -*-\nText.\n" "Text"
              "# -*- mode: org -*-\n#+filetags: :private:\nText.\n" ("private"))
             ;; No title: after the file's property drawer, or first.
             (":PROPERTIES:\n:ID: f00\n:END:\nText.\n" "Text"
              ":PROPERTIES:\n:ID: f00\n:END:\n#+filetags: :private:\nText.\n" ("private"))
             ("Text, no final newline" "Text"
              "#+filetags: :private:\nText, no final newline" ("private"))
             ;; An empty #+filetags.
             ("#+title: T\n#+filetags:\nText.\n" "Text"
              "#+title: T\n#+filetags: :private:\nText.\n" ("private"))
             ;; Keyword lines inside a block are not Org's keywords: left alone.
             ("#+title: T\n#+begin_src org\n#+filetags: :foo:\n#+end_src\n\nText\n* H\n" "Text"
              "#+title: T\n#+filetags: :private:\n#+begin_src org\n#+filetags: :foo:\n#+end_src\n\nText\n* H\n"
              ("private"))
             ("#+title: T\n#+begin_example\n#+filetags: :q:\n#+end_example\n#+filetags: :real:\n* H\n" "T"
              "#+title: T\n#+begin_example\n#+filetags: :q:\n#+end_example\n#+filetags: :real:private:\n* H\n"
              ("real" "private"))
             ("#+begin_src org\n#+title: Fake\n#+end_src\nText\n* H\n" "Text"
              "#+filetags: :private:\n#+begin_src org\n#+title: Fake\n#+end_src\nText\n* H\n" ("private"))
             ("#+title: T\n#+begin_src org\n#+filetags: :private:\n#+end_src\nText\n* H\n" "Text"
              "#+title: T\n#+filetags: :private:\n#+begin_src org\n#+filetags: :private:\n#+end_src\nText\n* H\n"
              ("private"))
             ;; The file's property drawer after comment lines stays the file's.
             ("# -*- mode: org -*-\n:PROPERTIES:\n:ID: abc-123\n:END:\n\nText\n* H\n" "Text"
              "# -*- mode: org -*-\n:PROPERTIES:\n:ID: abc-123\n:END:\n#+filetags: :private:\n\nText\n* H\n"
              ("private"))
             ("# a comment\n:PROPERTIES:\n:ID: abc-123\n:END:\nText\n* H\n" "Text"
              "# a comment\n:PROPERTIES:\n:ID: abc-123\n:END:\n#+filetags: :private:\nText\n* H\n"
              ("private"))))
    (pcase-let ((`(,text ,where ,expected ,tags) case))
      (let ((after (arcology-oracle-review-test--make-private text where)))
        (should (equal after expected))
        (should (equal (arcology-oracle-review-test--file-tags after) tags))
        ;; The file-level ID, if any, is still the file's.
        (should (equal (arcology-oracle-review-test--file-id after)
                       (arcology-oracle-review-test--file-id text)))))))

(ert-deftest arcology-oracle-review-test-make-private-file-on-disk ()
  "Saved, the file differs from before by the new tag alone, byte for byte, CRLF kept."
  (dolist (case '(("#+title: Kitchen\r\n\r\nText caf\303\251.\r\n* A\r\n"
                   "#+title: Kitchen\r\n#+filetags: :private:\r\n\r\nText caf\303\251.\r\n* A\r\n")
                  ("#+title: Kitchen\n#+filetags: :a:\nText caf\303\251."
                   "#+title: Kitchen\n#+filetags: :a:private:\nText caf\303\251.")
                  ("#+title: T\r\n#+begin_src org\r\n#+filetags: :foo:\r\n#+end_src\r\nText\r\n* H\r\n"
                   "#+title: T\r\n#+filetags: :private:\r\n#+begin_src org\r\n#+filetags: :foo:\r\n#+end_src\r\nText\r\n* H\r\n")
                  ("# -*- mode: org -*-\n:PROPERTIES:\n:ID: abc-123\n:END:\n\nText\n* H\n"
                   "# -*- mode: org -*-\n:PROPERTIES:\n:ID: abc-123\n:END:\n#+filetags: :private:\n\nText\n* H\n")))
    (let ((file (make-temp-file "private" nil ".org")))
      (unwind-protect
          (progn
            (let ((coding-system-for-write 'no-conversion))
              (write-region (car case) nil file nil 'silent))
            (let ((buffer (find-file-noselect file)))
              (with-current-buffer buffer
                (goto-char (point-min))
                (search-forward "Text")
                (arcology-oracle-make-private)
                ;; As saving writes it (without the final newline a save may add).
                (write-region nil nil file nil 'silent)
                (set-buffer-modified-p nil))
              (kill-buffer buffer))
            (with-temp-buffer
              (set-buffer-multibyte nil)
              (insert-file-contents-literally file)
              (should (equal (buffer-string) (cadr case)))))
        (delete-file file)))))

(ert-deftest arcology-oracle-review-test-make-private-file-already-private ()
  "A file already private by its #+filetags is left as it is, and the message says so."
  (with-temp-buffer
    (insert "#+title: T\n#+filetags: :Private:\nText.\n* A\n")
    (org-mode)
    (set-buffer-modified-p nil)
    (goto-char (point-min))
    (search-forward "Text")
    (let ((before (buffer-string)))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-make-private)
        (should (string-match-p "already" (car messages))))
      (should (equal (buffer-string) before))
      (should-not (buffer-modified-p)))))

;;;; One wait at most for a daemon that cannot be reached

(defun arcology-oracle-review-test--hanging-url ()
  "Return (URL . PROCESSES): a local port whose connections never open.
A server that stopped accepting, its queue full: a new connection
waits, as one to a host that drops packets does."
  (let* ((server (make-network-process :name "hanging" :server 1 :host "127.0.0.1" :service t
                                       :filter #'ignore :sentinel #'ignore))
         (port (process-contact server :service)))
    (stop-process server)
    (let ((fillers (cl-loop repeat 4 collect
                            (make-network-process :name "filler" :host "127.0.0.1" :service port
                                                  :nowait t :filter #'ignore :sentinel #'ignore))))
      (accept-process-output nil 0.3)
      (cons (format "http://127.0.0.1:%d" port) (cons server fillers)))))

(ert-deftest arcology-oracle-review-test-unreachable-daemon-one-wait ()
  "A daemon whose connections never open: one wait, a message that says so."
  (pcase-let* ((`(,url . ,processes) (arcology-oracle-review-test--hanging-url)))
    (unwind-protect
        (let ((arcology-oracle-url url)
              (arcology-oracle-token "x")
              (arcology-oracle-roam-directory nil)
              (arcology-oracle--server-roam-dirs nil)
              (arcology-oracle--last-report nil)
              (arcology-oracle-timeout 1.5)
              (arcology-oracle-llm-timeout 60)
              (start (float-time)))
          ;; Search: the roam directory is asked for first (GET /status).
          (arcology-oracle-test--capturing-messages messages
            (arcology-oracle-search "rye")
            (let ((said (arcology-oracle-test--wait
                         (lambda () (cl-find-if (lambda (m) (string-match-p "not reachable" m)) messages))
                         10 "the failure")))
              (should (equal said (format "arcology-oracle: daemon not reachable at %s (%s): %s" url
                                          "no connection within 1.5 seconds"
                                          "start it (arcology-oracle serve)")))
              (should (< (- (float-time) start) 2.9))))  ; not two waits
          (arcology-oracle-test--settled 5)
          ;; A question waits for the model 60 s, but not for a connection.
          (setq start (float-time))
          (with-temp-buffer
            (org-mode)
            (insert "* Rye\nHow much rye?\n")
            (arcology-oracle-ask "How much rye?"))
          (arcology-oracle-test--wait
           (lambda () (with-current-buffer arcology-oracle-answer-buffer-name
                        (string-match-p "^Not asked: daemon not reachable" (buffer-string))))
           10 "the question to fail")
          (should (< (- (float-time) start) 2.9))  ; not two waits
          (arcology-oracle-test--settled 5))
      (mapc #'delete-process processes)
      (when (get-buffer arcology-oracle-answer-buffer-name)
        (kill-buffer arcology-oracle-answer-buffer-name)))))

(ert-deftest arcology-oracle-review-test-silent-daemon-one-wait ()
  "A server that accepts and never answers is asked once per command, not twice."
  (let* ((connections 0)
         (server (make-network-process :name "silent" :server t :host "127.0.0.1" :service t
                                       :filter #'ignore :sentinel #'ignore
                                       :log (lambda (&rest _) (cl-incf connections)))))
    (unwind-protect
        (let ((arcology-oracle-url (format "http://127.0.0.1:%d" (process-contact server :service)))
              (arcology-oracle-token "x")
              (arcology-oracle-roam-directory nil)
              (arcology-oracle--server-roam-dirs nil)
              (arcology-oracle--last-report nil)
              (arcology-oracle-timeout 1))
          (arcology-oracle-test--capturing-messages messages
            (arcology-oracle-search "rye")
            (arcology-oracle-test--wait
             (lambda () (cl-find-if (lambda (m) (string-match-p "no answer from the daemon within 1 seconds" m))
                                    messages))
             10 "the failure")
            (arcology-oracle-test--settled 5)
            ;; One connection: nothing more was asked after /status failed.
            (should (= connections 1))
            (should (= 1 (cl-count-if (lambda (m) (string-match-p "no answer" m)) messages)))))
      (delete-process server))))

(ert-deftest arcology-oracle-review-test-memorize-unanswered-may-still-be-remembered ()
  "A capture sent to a daemon that then stays silent is not said to be lost.
The daemon may write it when it catches up; a message saying nothing
was remembered made the user send it again, and the note held it twice."
  (let* ((server (make-network-process :name "silent" :server t :host "127.0.0.1" :service t
                                       :filter #'ignore :sentinel #'ignore))
         (roam (make-temp-file "arcology-oracle-roam" t)))
    (unwind-protect
        (let ((arcology-oracle-url (format "http://127.0.0.1:%d" (process-contact server :service)))
              (arcology-oracle-token "x")
              (arcology-oracle-roam-directory roam)
              (arcology-oracle--server-roam-dirs
               (list (cons (format "http://127.0.0.1:%d" (process-contact server :service)) roam)))
              (arcology-oracle--last-report nil)
              (arcology-oracle-timeout 1)
              (kill-ring nil))
          (arcology-oracle-test--capturing-messages messages
            (arcology-oracle-memorize "Pizza needs 65% hydration")
            (arcology-oracle-test--wait
             (lambda () (cl-find-if (lambda (m) (string-match-p "no answer from the daemon" m)) messages))
             10 "the failure")
            (let ((said (cl-find-if (lambda (m) (string-match-p "no answer from the daemon" m)) messages)))
              (should (string-match-p "may still remember it, so look in today's daily note before sending it again" said))
              (should-not (string-match-p "nothing was remembered" said)))
            (should (equal (current-kill 0) "Pizza needs 65% hydration"))))
      (delete-process server)
      (delete-directory roam t))))

(ert-deftest arcology-oracle-review-test-search-results-wait-when-the-user-went-on ()
  "Results that come after the user typed on wait for `arcology-oracle-search-results'.
A prompt opened from the answer's timer took the next keys typed in
the note.  Chosen later, the result is visited and the similar notes
window is told that point moved."
  (let ((arcology-oracle-roam-directory temporary-file-directory)
        (arcology-oracle--server-roam-dirs (list (cons (arcology-oracle--base-url) temporary-file-directory)))
        (arcology-oracle--search-waiting nil)
        (arcology-oracle--last-report nil)
        answer prompted visited refreshed)
    (cl-letf (((symbol-function 'arcology-oracle--json)
               (cl-function (lambda (_method _path &key callback &allow-other-keys) (setq answer callback) nil)))
              ((symbol-function 'completing-read) (lambda (&rest _) (setq prompted t) "Levain"))
              ((symbol-function 'arcology-oracle--visit) (lambda (result) (setq visited result)))
              ((symbol-function 'arcology-oracle--similar-post-command-h) (lambda () (setq refreshed t))))
      (arcology-oracle-test--capturing-messages messages
        (arcology-oracle-search "levain")
        (setq num-input-keys (1+ num-input-keys))  ; a key typed in the note meanwhile
        (funcall answer '((results . [((title . "Levain") (heading . "Levain") (olp . []) (file . "l.org") (line . 1))])))
        (arcology-oracle-test--settled 1)
        (should-not prompted)
        (should (cl-find-if (lambda (m) (string-match-p "1 results for \"levain\" are ready" m)) messages))
        (arcology-oracle-search-results)
        (should prompted)
        (should (equal (alist-get 'file visited) "l.org"))
        (should refreshed)))))

(ert-deftest arcology-oracle-review-test-section-counts-the-notes-shown ()
  "The org-roam section's heading counts the notes shown, not the fold below the cut."
  (require 'magit-section)
  (with-temp-buffer
    (let ((inhibit-read-only t)
          (results (append (mapcar (lambda (n) `((node_id . ,(format "a%d" n)) (title . ,(format "Above %d" n))
                                                 (score . 0.8) (below_cutoff . :false)))
                                   '(1 2))
                           (mapcar (lambda (n) `((node_id . ,(format "b%d" n)) (title . ,(format "Below %d" n))
                                                 (score . 0.1) (below_cutoff . t)))
                                   '(1 2 3)))))
      (magit-section-mode)
      (let ((inhibit-read-only t))
        (magit-insert-section (root)
          (arcology-oracle--insert-section results nil nil nil)))
      (goto-char (point-min))
      (should (looking-at-p "Similar notes (2)$"))
      (should (search-forward "3 more below relevance" nil t)))))

(ert-deftest arcology-oracle-review-test-section-fits-the-org-roam-window ()
  "In the org-roam buffer a long title leaves its marks in the window and the
snippet is cut to it (the snippet was cut at 100 columns, the title never: the
marks of a Japanese title were past the edge)."
  (require 'magit-section)
  (let ((buffer (generate-new-buffer "*org-roam-test*"))
        (title "サワードウのパン作りについての非常に長いタイトルのノート、スターターの世話と発酵の記録"))
    (unwind-protect
        (progn
          (delete-other-windows)
          (set-window-buffer (split-window-right) buffer)
          (with-current-buffer buffer
            (magit-section-mode)
            (let ((inhibit-read-only t)
                  (width (window-width (get-buffer-window buffer))))
              (magit-insert-section (root)
                (arcology-oracle--insert-section
                 `(((node_id . "j") (title . ,title) (heading . "見出し") (olp ,title "見出し") (score . 0.05)
                    (snippet . ,(mapconcat #'identity (make-list 30 "rye flour") " "))))
                 nil nil nil))
              (goto-char (point-min))
              (should (re-search-forward "^0\\.05 サワードウ[^ ]*… weak (見出し)$" nil t))
              (should (< (string-width (buffer-substring (line-beginning-position) (match-beginning 0)))
                         width))
              (should (< (string-width (buffer-substring (line-beginning-position)
                                                         (- (line-end-position) (length " (見出し)"))))
                         width))
              (forward-line 1)
              (should (looking-at-p "  rye flour rye flour"))
              (should (< (string-width (buffer-substring (point) (line-end-position))) width)))))
      (kill-buffer buffer)
      (delete-other-windows))))

(ert-deftest arcology-oracle-review-test-ask-names-the-file-an-unsaved-buffer-visits ()
  "An unsaved buffer is asked about with the file it visits as `visiting', not as its place.
The daemon looks for the setup files the text names beside it; its
lines are not the saved file's, so `file' and `line' stay unsent."
  (let* ((roam (make-temp-file "arcology-oracle-roam" t))
         (file (expand-file-name "sub/n.org" roam))
         (arcology-oracle-roam-directory roam)
         (arcology-oracle--server-roam-dirs (list (cons (arcology-oracle--base-url) roam)))
         sent)
    (make-directory (file-name-directory file))
    (write-region "#+title: N\n* H\nwords\n" nil file nil 'silent)
    (unwind-protect
        (with-current-buffer (find-file-noselect file)
          (cl-letf (((symbol-function 'arcology-oracle--stream-answer)
                     (lambda (_marker _path json &rest _) (setq sent json)))
                    ((symbol-function 'arcology-oracle--answer-start) (lambda (&rest _) (point-marker))))
            (arcology-oracle-ask "what is this?")
            (should (equal (alist-get 'file sent) "sub/n.org"))  ; saved: its place too
            (goto-char (point-max))
            (insert "more words\n")
            (arcology-oracle-ask "what is this?"))
          (should (equal (alist-get 'visiting sent) "sub/n.org"))
          (should-not (alist-get 'file sent))
          (should-not (alist-get 'line sent))
          (set-buffer-modified-p nil)
          (kill-buffer))
      (delete-directory roam t))))

;;;; The similar notes: mouse-1, titles

(ert-deftest arcology-oracle-review-test-similar-mouse-1-and-cookies ()
  "mouse-1 follows an entry (as on a link); a title's statistics cookie is not shown."
  (unwind-protect
      (progn
        (arcology-oracle--similar-render
         nil "Clean the jar [1/2]"
         '(((node_id . "a") (title . "Bread Hydration") (heading . "Autolyse [2/3]")
            (olp "Bread Hydration") (score . 0.9))))
        (with-current-buffer arcology-oracle-similar-buffer-name
          (should (string-prefix-p "Similar to: Clean the jar\n" (buffer-string)))
          (should (string-match-p "^  Bread Hydration › Autolyse$" (buffer-string)))
          (goto-char (point-min))
          (arcology-oracle-similar-next)
          (should (mouse-on-link-p (point)))
          (should (mouse-on-link-p (line-beginning-position 2)))))
    (when (get-buffer arcology-oracle-similar-buffer-name)
      (kill-buffer arcology-oracle-similar-buffer-name))))

;;;; The rejections of a note are headed by its title, not its ID

(ert-deftest arcology-oracle-review-test-rejections-name-their-note ()
  "C-c o L with the daemon stopped: the header names the note as it reads,
as it does with the daemon up (it showed \"Rejected links from:
adda0990-28e8-487f-ae0a-eda5a8987581\")."
  (let* ((closed (make-network-process :name "closed" :server t :host "127.0.0.1" :service t))
         (port (process-contact closed :service))
         (id "adda0990-28e8-487f-ae0a-eda5a8987581"))
    (delete-process closed)
    (unwind-protect
        (let ((arcology-oracle-url (format "http://127.0.0.1:%d" port))
              (arcology-oracle-token "x")
              (arcology-oracle--last-report nil))
          (dolist (point-at '("^My working" "^Rye is"))
            (with-temp-buffer
              (org-mode)
              (insert ":PROPERTIES:\n:ID:       " id "\n:END:\n#+title: Sourdough Baking\n\n"
                      "My working notes.\n\n* Rye flour\nRye is thirsty.\n")
              (goto-char (point-min))
              (re-search-forward point-at)
              (arcology-oracle-link-rejections))
            (let ((text (arcology-oracle-test--wait
                         (lambda () (with-current-buffer arcology-oracle-rejections-buffer-name
                                      (let ((text (buffer-string)))
                                        (and (string-match-p "not reachable" text) text))))
                         10 "the daemon to be found stopped")))
              (should (string-prefix-p "Rejected links from: Sourdough Baking\n" text))
              (should-not (string-match-p id text)))
            (arcology-oracle-test--settled 5)))
      (when (get-buffer arcology-oracle-rejections-buffer-name)
        (kill-buffer arcology-oracle-rejections-buffer-name)))))

(provide 'arcology-oracle-review-test)

;;; arcology-oracle-review-test.el ends here
