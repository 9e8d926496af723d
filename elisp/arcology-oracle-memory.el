;;; arcology-oracle-memory.el --- Remember notes through the arcology-oracle daemon -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
;; URL: https://github.com/arcology-oracle/arcology-oracle

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; Memory, from Emacs:
;;
;; - `arcology-oracle-memorize' sends the region (or text read from
;;   the minibuffer) to the daemon's POST /memorize, which appends it
;;   as a heading to today's org-roam daily note (or to the capture
;;   inbox while that daily has unsaved edits in Emacs: the request
;;   names the notes with unsaved edits, as Emacs may make no lock
;;   file for the daemon to see) and indexes it at once.  The
;;   answer's [[id:...][...]] link is shown and kept in
;;   `arcology-oracle-last-memory'; a buffer visiting the file without
;;   unsaved edits is reverted so it shows the new heading.
;; - `arcology-oracle-forget' takes the last capture back out.
;;
;; Where the text came from is arcology-oracle-memory-source.el's;
;; making a heading private is arcology-oracle-make-private.el's.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-memory-source)
(require 'arcology-oracle-http-errors)

(defcustom arcology-oracle-memorize-tags nil
  "Tags given to every note `arcology-oracle-memorize' sends.
A list of Org tags, for example (\"inbox\" \"phone\")."
  :type '(repeat string)
  :group 'arcology-oracle)

(defcustom arcology-oracle-memorize-follow-dailies t
  "Non-nil sends captures to where org-roam keeps the daily notes.
That is `org-roam-dailies-directory' (when org-roam-dailies is
loaded and it lies under the daemon's roam directory); nil leaves
it to the daemon's `dailies_dir' setting (default \"daily\")."
  :type 'boolean
  :group 'arcology-oracle)

(defvar org-roam-dailies-directory)
(defvar org-roam-directory)

(defvar arcology-oracle-last-memory nil
  "The daemon's answer to the last `arcology-oracle-memorize', an alist.
Its keys are `id', `file', `line', `link', `inbox' and `note'.")

(defun arcology-oracle--memory-payload (text title tags &optional source dailies-dir role unsaved file line)
  "Return the JSON alist of POST /memorize for TEXT, TITLE and TAGS.
SOURCE is a link to where TEXT came from; DAILIES-DIR the daily
notes' folder relative to the roam directory; ROLE \"oracle\" for
the oracle's own words; UNSAVED the notes with unsaved edits in
Emacs, relative to the roam directory (see
`arcology-oracle--unsaved-notes').  FILE is the note TEXT was cut
from, relative to the roam directory, and LINE (only with FILE) its
first line there: the daemon refuses TEXT from a private part of it."
  (append `((text . ,text))
          (when (and title (not (string-empty-p title))) `((title . ,title)))
          `((tags . ,(vconcat (or tags arcology-oracle-memorize-tags))))
          (when source `((source . ,source)))
          (when dailies-dir `((dailies_dir . ,dailies-dir)))
          (when role `((role . ,role)))
          (when unsaved `((unsaved . ,(vconcat unsaved))))
          (when file `((file . ,file)))
          (when (and file line) `((line . ,line)))))

(defun arcology-oracle--unsaved-notes (roam-dir)
  "Return the files under ROAM-DIR with unsaved edits in Emacs.
Each relative to ROAM-DIR, by its true name (symlinks resolved), as
a list.  The daemon sees unsaved edits by Emacs's lock (.#NAME
beside the file), which Emacs does not make with `create-lockfiles'
nil and makes elsewhere by `lock-file-name-transforms': this list
tells it instead, so that a capture never goes into a note being
edited (today's daily among them sends it to the inbox)."
  (when roam-dir
    (delete-dups
     (delq nil (mapcar (lambda (buffer)
                         (let ((file (buffer-file-name buffer)))
                           (and file (buffer-modified-p buffer)
                                (arcology-oracle--relative-file file roam-dir))))
                       (buffer-list))))))

(defun arcology-oracle--dailies-directory ()
  "Return the absolute `org-roam-dailies-directory' to capture into, or nil.
Nil when `arcology-oracle-memorize-follow-dailies' is nil or
org-roam-dailies is not loaded."
  (when (and arcology-oracle-memorize-follow-dailies
             (boundp 'org-roam-dailies-directory)
             (stringp org-roam-dailies-directory))
    (file-name-as-directory
     (expand-file-name org-roam-dailies-directory
                       (or (bound-and-true-p org-roam-directory) default-directory)))))

(defun arcology-oracle--dailies-dir (dir roam-dir)
  "Return the directory DIR relative to ROAM-DIR, or nil when not under it.
ROAM-DIR itself (`org-roam-dailies-directory' \"./\") is \".\", which
the daemon takes as the roam directory, not its own `dailies_dir'."""
  (when-let ((rel (and dir roam-dir (arcology-oracle--relative-file dir roam-dir))))
    (let ((rel (directory-file-name rel)))
      (if (string-empty-p rel) "." rel))))

(defun arcology-oracle--memory-revert (roam-dir rel)
  "Revert the buffer visiting REL under ROAM-DIR, unless it has unsaved edits.
Return `reverted', or `killed' for a file that is gone (a forget
removed the note the daemon had made for one capture), else nil."
  (when-let* ((roam-dir roam-dir)
              (file (expand-file-name rel roam-dir))
              (buffer (find-buffer-visiting file)))
    (with-current-buffer buffer
      (cond ((buffer-modified-p) nil)
            ((file-exists-p file) (revert-buffer t t t) 'reverted)
            (t (kill-buffer buffer) 'killed)))))

(defun arcology-oracle--memorized (answer &optional callback)
  "Report the daemon's ANSWER to POST /memorize, then call CALLBACK with it.
The new heading's link goes on the kill ring, to be pasted anywhere.
The answer's note, when it has one, is shown too: say, that the
daily is in a folder the daemon's index leaves out (never recalled)."
  (setq arcology-oracle-last-memory answer)
  (let ((file (alist-get 'file answer))
        (link (alist-get 'link answer))
        (note (alist-get 'note answer)))
    (when (stringp link) (kill-new link))
    ;; The title, not the link: "[[id:c74cea3f-ee17-...][...]]" took two
    ;; lines of the echo area and read as syntax.
    (arcology-oracle--message "Remembered in %s:%s: \"%s\" (its link is copied: %s pastes it)%s"
                              file (alist-get 'line answer)
                              (or (alist-get 'title answer) link)
                              (substitute-command-keys "\\[yank]")
                              (cond ((eq (alist-get 'inbox answer) t)
                                     " (today's daily has unsaved edits: written to the inbox)")
                                    ((stringp note) (format " (%s)" note))
                                    (t "")))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir) (arcology-oracle--memory-revert roam-dir file))
     #'ignore))
  (when callback (funcall callback answer)))

(defun arcology-oracle--memorize-failed (text message &optional req)
  "Put TEXT, which the daemon did not confirm, on the kill ring; show MESSAGE.
REQ is the request, when one was made.  One that reached the daemon
and got no answer, or none but a success cut short, may still be
remembered when the daemon catches up: the message says to look
before sending TEXT again, not that nothing was remembered.  A 409
says whether sending it again can work (see `arcology-oracle--refusal')."
  (kill-new text)
  (let ((status (and req (arcology-oracle--http-status req)))
        (yank (substitute-command-keys "\\[yank]")))
    (arcology-oracle--report
     (cond
      ((and req (arcology-oracle--http-connected req) (or (null status) (<= 200 status 299)))
       (format "%s: the daemon has the text and may still remember it, so look in today's daily note before sending it again (it is on the kill ring: %s pastes it)"
               message yank))
      ((arcology-oracle--retry-p message)
       (format "%s; your text is on the kill ring (%s pastes it)"
               (arcology-oracle--refusal "Nothing remembered" message
                                         (substitute-command-keys "\\[arcology-oracle-memorize]"))
               yank))
      (t (format "%s; nothing was remembered, your text is on the kill ring (%s pastes it)" message yank))))))

;;;###autoload
(defun arcology-oracle-memorize (text &optional title tags callback source role file line)
  "Send TEXT to the daemon, to be remembered in today's daily note.
Interactively TEXT is the active region, else read from the
minibuffer.  TITLE names the heading (default: the text's first
words); TAGS are Org tags (default `arcology-oracle-memorize-tags').
CALLBACK, when given, is called with the daemon's answer, after it
is reported in the echo area.  SOURCE is a link to where TEXT came
from, kept as the new heading's :SOURCE: property: interactively,
the heading the region came from, or the one point is in for text
read from the minibuffer (none from a private place or a note the
daemon never reads: see `arcology-oracle--typed-source'); in a list
\(the org-roam buffer, the similar notes), its note's at the place it
was read or the node shown, and a region of the list itself is refused.
ROLE \"oracle\" keeps TEXT as the oracle's words (:ROLE: oracle),
never as the user's notes: interactively, a region of an answer or
a summary.  A region in a
private part of the note, or reaching into one (see
`arcology-oracle--private-between-p'), is refused: nothing is sent;
so is text from a note the daemon never reads (see
`arcology-oracle--unread-refusal').
FILE is the file TEXT was cut from and LINE its first line there (nil
for a buffer with unsaved edits, whose lines are not the file's):
interactively, the region's.  For a FILE under the roam directory the
daemon judges that place by its own rule too (its `private_tags',
`exclude_globs', the tags of a #+SETUPFILE), and refuses TEXT from a
private part of the saved note: nothing is written, and the echo area
says so.

The daily note is in `org-roam-dailies-directory' (see
`arcology-oracle-memorize-follow-dailies'); while it has unsaved
edits in Emacs, the daemon writes to its capture inbox instead, and
with the inbox unsaved too, nothing (see
`arcology-oracle--unsaved-notes').  The new heading's link
goes on the kill ring.  When the daemon cannot be reached, TEXT
goes on the kill ring instead, so nothing typed is lost."
  (interactive
   (if (use-region-p)
       (if (progn (arcology-oracle--refuse-in-list "select the text in its note (no region: type it)")
                  (arcology-oracle--private-between-p (region-beginning) (region-end)))
           ;; Its daily note is not private: the text would be indexed and found.
           (arcology-oracle--user-error
            "This text is in a private part of your notes: nothing was sent")
         (list (buffer-substring-no-properties (region-beginning) (region-end))
               nil nil nil (arcology-oracle--memory-source (region-beginning))
               (and (arcology-oracle--oracle-words-p (region-beginning) (region-end)) "oracle")
               (arcology-oracle--visited-file)
               (and (not (buffer-modified-p)) (line-number-at-pos (region-beginning) t))))
     (let ((source (arcology-oracle--typed-source-here)))
       (list (arcology-oracle--read-string "Remember: ") nil nil nil source))))
  (when (string-empty-p (string-trim (or text "")))
    (arcology-oracle--user-error "Nothing to remember"))
  ;; Said at once: a daemon asleep answers after `arcology-oracle-timeout' at the earliest.
  (arcology-oracle--message "arcology-oracle: remembering…")
  ;; The options as they are now: the answer of /status may come later.
  (let ((tags (or tags arcology-oracle-memorize-tags))
        (dailies (arcology-oracle--dailies-directory)))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir)
       (if-let ((refused (arcology-oracle--unread-refusal file roam-dir)))
           (arcology-oracle--report refused)
         (when (arcology-oracle--unread-refusal (arcology-oracle--source-file source) roam-dir)
           (setq source nil))  ; typed text: itself not the note's, so sent without it
         (let (req)  ; the errback always runs later, when `req' is set
           (setq req (arcology-oracle--json
                      "POST" "/memorize"
                      :json (arcology-oracle--memory-payload text title tags source
                                                             (arcology-oracle--dailies-dir dailies roam-dir) role
                                                             (arcology-oracle--unsaved-notes roam-dir)
                                                             (arcology-oracle--relative-file file roam-dir) line)
                      :callback (lambda (answer) (arcology-oracle--memorized answer callback))
                      :errback (lambda (message) (arcology-oracle--memorize-failed text message req)))))))
     (lambda (message) (arcology-oracle--memorize-failed text message)))))

;;;###autoload
(defun arcology-oracle-forget ()
  "Forget a captured heading: the one at point, else the last remembered.
Asks first.  The daemon removes it from its note only while it is
exactly as it was captured: a capture you edited, or typed a heading
under, is refused, and nothing of yours is removed."
  (interactive)
  (pcase-let ((`(,id ,title ,text) (arcology-oracle--capture-to-forget)))
    (arcology-oracle--refuse-nested-prompt)
    (unless (yes-or-no-p (format "Forget \"%s\" (removed from its note)? " title))
      (arcology-oracle--user-error "Nothing forgotten"))
    (arcology-oracle--message "arcology-oracle: forgetting \"%s\"…" title)
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir)
       (arcology-oracle--forget-request id title (arcology-oracle--unsaved-notes roam-dir)
                                        (or text (arcology-oracle--last-capture-text roam-dir))))
     (lambda (message) (arcology-oracle--report (concat "Nothing forgotten: " message))))))

(defun arcology-oracle--forget-request (id title unsaved &optional text)
  "POST /forget the capture ID (TITLE); report the answer.
UNSAVED names the notes with unsaved edits in Emacs (see
`arcology-oracle--unsaved-notes'): the daemon removes nothing from
one of them (409, to be tried again once saved), as it writes no
capture into one, also in an Emacs that makes no lock files.
TEXT is the capture as its note held it: when no undo in a buffer
brings the capture back (the note was not visited, or is gone), it
goes on the kill ring, and the message says so."
  (arcology-oracle--json
   "POST" "/forget" :json `((id . ,id) ,@(when unsaved `((unsaved . ,(vconcat unsaved)))))
   :callback
   (lambda (answer)
     (when (equal id (alist-get 'id arcology-oracle-last-memory))
       (setq arcology-oracle-last-memory nil))
     (arcology-oracle--with-roam-dir
      (lambda (roam-dir)
        (let* ((file (alist-get 'file answer))
               (gone (not (file-exists-p (expand-file-name file roam-dir))))
               (done (arcology-oracle--memory-revert roam-dir file))
               (kept (and text (not (eq done 'reverted))
                          (progn (kill-new text)
                                 (format " (its text is on the kill ring: %s yanks it)"
                                         (substitute-command-keys "\\[yank]"))))))
          (arcology-oracle--message "Forgot \"%s\": %s%s" title
                                    (cond (gone (format "%s is gone, it held only this capture" file))
                                          ((eq done 'reverted)
                                           (format "%d lines removed from %s (%s in its buffer brings them back)"
                                                   (alist-get 'removed_lines answer) file
                                                   (substitute-command-keys "\\[undo]")))
                                          (t (format "%d lines removed from %s" (alist-get 'removed_lines answer) file)))
                                    (or kept ""))))
      (lambda (_) (arcology-oracle--message "Forgot \"%s\"" title))))
   :errback
   (lambda (message)
     ;; The daemon's words may say to try again already: said once.
     (arcology-oracle--report
      (arcology-oracle--refusal "Nothing forgotten" message
                                (substitute-command-keys "\\[arcology-oracle-forget]"))))))

(defun arcology-oracle--subtree-text ()
  "Return the text of the subtree of the heading at point."
  (buffer-substring-no-properties (point) (save-excursion (org-end-of-subtree t t) (point))))

(defun arcology-oracle--last-capture-text (roam-dir)
  "Return the last capture's text, read from its note under ROAM-DIR, or nil."
  (when-let* ((memory arcology-oracle-last-memory)
              (file (expand-file-name (alist-get 'file memory) roam-dir))
              ((file-readable-p file)))
    (with-temp-buffer
      (insert-file-contents file)
      (delay-mode-hooks (org-mode))
      (when-let ((pos (org-find-entry-with-id (alist-get 'id memory))))
        (goto-char pos)
        (arcology-oracle--subtree-text)))))

(defun arcology-oracle--capture-to-forget ()
  "Return (ID TITLE TEXT) of the capture to forget: at point, else the last one.
TEXT is the capture's subtree at point; nil for the last one.
At point means the heading at point or one above it with the
daemon's :CAPTURED_BY: mark, in a buffer whose edits are saved (the
daemon forgets what the file holds)."
  (let ((here (and (derived-mode-p 'org-mode)
                   (save-excursion
                     (save-restriction
                       (widen)
                       (unless (org-before-first-heading-p)
                         (org-back-to-heading t)
                         (while (and (not (org-entry-get nil "CAPTURED_BY")) (org-up-heading-safe)))
                         (when (org-entry-get nil "CAPTURED_BY")
                           (list (org-entry-get nil "ID") (org-get-heading t t t t)
                                 (arcology-oracle--subtree-text)))))))))
    (cond
     ((and here (buffer-modified-p))
      (arcology-oracle--user-error "Save the note first: the daemon forgets what its file holds"))
     ((and here (car here)) here)
     (here (arcology-oracle--user-error "This capture has no :ID: to forget it by"))
     (arcology-oracle-last-memory
      (when-let* ((roam-dir (arcology-oracle--roam-dir))
                  (buffer (find-buffer-visiting
                           (expand-file-name (alist-get 'file arcology-oracle-last-memory) roam-dir))))
        (when (buffer-modified-p buffer)
          (arcology-oracle--user-error "Save %s first: the daemon forgets what its file holds"
                                       (buffer-name buffer))))
      (list (alist-get 'id arcology-oracle-last-memory) (alist-get 'title arcology-oracle-last-memory)))
     (t (arcology-oracle--user-error
         "No captured heading at point (one with :CAPTURED_BY:), and nothing remembered since Emacs started")))))

(provide 'arcology-oracle-memory)

;;; arcology-oracle-memory.el ends here
