;;; arcology-oracle-notes.el --- Headings, roam directory and visiting notes for arcology-oracle -*- lexical-binding: t -*-

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

;; Where the daemon's notes are in this Emacs: the roam directory as
;; the daemon sees it, the heading at point described for a request,
;; and visiting a result (by org-roam ID, by file and line, or through
;; org-id).  The similar notes and the ask commands share these.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'url-util)
(require 'org)
(require 'arcology-oracle-http)

(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-point "ext:org-roam-node" (node) t)
(declare-function org-roam-node-from-id "ext:org-roam-node" (id))
(defvar org-roam-directory)

;;; Privacy

(defcustom arcology-oracle-private-tags '("private")
  "Tags that keep a heading out of the daemon's index.
Keep this in step with the daemon's `private_tags' setting;
`arcology-oracle-make-private' adds the first one, for example
\"private\".  Text from under such a heading is never sent."
  :type '(repeat string)
  :group 'arcology-oracle)

(defun arcology-oracle--file-tags ()
  "Return the tags of the #+filetags keywords of the current buffer.
Each keyword holds tags between colons or blanks, as Org has them;
those of its #+SETUPFILEs too."
  (cl-mapcan (lambda (value)
               (cl-mapcan (lambda (word) (split-string word ":" t))
                          (split-string value)))
             (cdr (assoc "FILETAGS" (org-collect-keywords '("FILETAGS"))))))

(defun arcology-oracle--private-tags-p (tags)
  "Return non-nil when one of TAGS is a private tag.
That is \"crypt\" or one of `arcology-oracle-private-tags', in any
letter case, as the daemon's index reads tags."
  (let ((private (mapcar #'downcase (cons "crypt" arcology-oracle-private-tags))))
    (seq-some (lambda (tag) (member (downcase tag) private)) tags)))

(defun arcology-oracle--src-edit-origin ()
  "Return the marker of the block this buffer edits, or nil.
Non-nil in the buffer \\[org-edit-special] opens on a source block: its
text is the block's, and whether it is private is decided there."
  (and (fboundp 'org-src-edit-buffer-p) (org-src-edit-buffer-p)
       (boundp 'org-src--beg-marker)
       (markerp org-src--beg-marker)
       (buffer-live-p (marker-buffer org-src--beg-marker))
       org-src--beg-marker))

(defun arcology-oracle--private-here-p (&optional pos)
  "Return non-nil when POS (default point) is in a private part of the buffer.
That is: the heading there, or one above it, or the file (its
#+filetags) has the tag \"crypt\" or one of
`arcology-oracle-private-tags' (any letter case), or has a
ROAM_EXCLUDE property that is not \"nil\", as the daemon's index
reads them.  Text from there is not sent: cut out of the buffer, it
no longer says that it is private.  In a buffer editing a source
block (\\[org-edit-special]), also where the block is in its note.
Else always nil outside Org mode."
  (or (when-let ((origin (arcology-oracle--src-edit-origin)))
        (with-current-buffer (marker-buffer origin)
          (arcology-oracle--private-here-p (marker-position origin))))
      (arcology-oracle--private-in-org-p pos)))

(defun arcology-oracle--private-in-org-p (pos)
  "Return non-nil when POS (or point) is private by this Org buffer's own text.
See `arcology-oracle--private-here-p', which also asks the note of a
source block being edited."
  (and (derived-mode-p 'org-mode)
       (save-excursion
         (save-restriction
           (widen)
           (goto-char (or pos (point)))
           (let* ((org-use-tag-inheritance t)
                  (org-tags-exclude-from-inheritance nil)
                  ;; As the buffer says now: `org-file-tags' is only read again by
                  ;; `org-mode-restart', not after an edit or an undo of #+filetags.
                  (org-file-tags (arcology-oracle--file-tags))
                  (tags (if (org-before-first-heading-p)
                            org-file-tags
                          (org-get-tags)))
                  (exclude (org-entry-get nil "ROAM_EXCLUDE" t)))
             (or (arcology-oracle--private-tags-p tags)
                 (and exclude (not (equal exclude "nil")))))))))

(defun arcology-oracle--private-between-p (beg end)
  "Return non-nil when any of the text from BEG to END is in a private part.
That is: BEG, or a heading between BEG and END, is where
`arcology-oracle--private-here-p' says so.  A region that starts in
a public heading and reaches into a private one below it is private
too: cut out of its buffer, it would no longer say so.  In a buffer
editing a source block, also where the block is in its note."
  (or (and (arcology-oracle--src-edit-origin) (arcology-oracle--private-here-p beg))
      (and (derived-mode-p 'org-mode)
           (save-excursion
             (save-restriction
               (widen)
               (or (arcology-oracle--private-here-p beg)
                   (progn
                     (goto-char beg)
                     (let ((found nil))
                       (while (and (not found) (re-search-forward org-outline-regexp-bol end t))
                         (setq found (arcology-oracle--private-here-p (match-beginning 0))))
                       found))))))))

;;; Roam directory

(defvar arcology-oracle--server-roam-dirs nil
  "Alist of (URL . DIRECTORY): each daemon's roam directory from /status.
DIRECTORY is nil when `arcology-oracle-roam-directory' is set and the
daemon's path is no directory here (see `arcology-oracle--with-roam-dir').
A daemon that could not be reached is asked again when it is back:
it may have been started on other notes.")

(defvar arcology-oracle--server-exclude-globs nil
  "Alist of (URL . GLOBS): each daemon's `exclude_globs' from /status.")

(defun arcology-oracle--forget-roam-dir (url)
  "Forget what the daemon at URL said its roam directory was."
  (setq arcology-oracle--server-roam-dirs (assoc-delete-all url arcology-oracle--server-roam-dirs)
        arcology-oracle--server-exclude-globs
        (assoc-delete-all url arcology-oracle--server-exclude-globs)))

(add-hook 'arcology-oracle--unreachable-functions #'arcology-oracle--forget-roam-dir)

(defun arcology-oracle--roam-dir-from-daemon-p ()
  "Return non-nil when the roam directory known now is what the daemon said.
Not one configured: that one may be asked again (the daemon may
have been restarted on other notes since)."
  (and (not arcology-oracle-roam-directory)
       (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)))

(defun arcology-oracle--roam-dir ()
  "Return the daemon's roam directory as known now, or nil.
That is `arcology-oracle-roam-directory', else what the daemon's
/status said, else `org-roam-directory'."
  (let ((dir (or arcology-oracle-roam-directory
                 (cdr (assoc (arcology-oracle--base-url)
                             arcology-oracle--server-roam-dirs))
                 (bound-and-true-p org-roam-directory))))
    (and dir (file-name-as-directory (expand-file-name dir)))))

(defvar arcology-oracle--configured-notes nil
  "Alist of (URL . (SETTING . DIRECTORY)): the daemons' notes, as set.
DIRECTORY is the roam directory the daemon at URL named when
`arcology-oracle-roam-directory' was SETTING.  Not forgotten when
the daemon goes: restarted on other notes, the setting no longer
says where they are (see `arcology-oracle--stale-setting').
Forgotten whenever the setting is set, to the same path too.")

(defun arcology-oracle--stale-setting (url dir)
  "Return why the daemon at URL no longer fits the roam directory set, or nil.
That is `arcology-oracle-roam-directory'.
DIR is the roam directory its /status names now; the first one named
with this setting is the one it was set for."
  (let ((known (cdr (assoc url arcology-oracle--configured-notes))))
    (if (and known (equal (car known) arcology-oracle-roam-directory))
        (unless (equal (cdr known) dir)
          (format (concat "the daemon at %s was restarted on other notes (%s, not %s): nothing was done;"
                          " set `arcology-oracle-roam-directory' to where this Emacs sees them")
                  url dir (cdr known)))
      (setf (alist-get url arcology-oracle--configured-notes nil nil #'equal)
            (cons arcology-oracle-roam-directory dir))
      nil)))

(defun arcology-oracle--roam-directory-set (_symbol _value operation _where)
  "Forget the daemons' notes known with the old setting when it is set.
OPERATION is how `arcology-oracle-roam-directory' changed.  Set again
to the same path counts too: the daemon may have been restarted on
the same notes seen under another path, which this Emacs sees where
it did (see `arcology-oracle--stale-setting')."
  (when (memq operation '(set let))
    (setq arcology-oracle--configured-notes nil)))

(add-variable-watcher 'arcology-oracle-roam-directory #'arcology-oracle--roam-directory-set)

(defun arcology-oracle--with-roam-dir (callback &optional errback)
  "Call CALLBACK with the daemon's roam directory (or nil), or ERRBACK.
Reads the daemon's /status first (then CALLBACK runs later, from a
process sentinel), whether `arcology-oracle-roam-directory' is set or
not: its `exclude_globs', which daemon process answers and the notes
it serves (see `arcology-oracle--remember-instance') are known so.
Its answer is remembered until the daemon cannot be reached or a
note is refused as not under it (see
`arcology-oracle--forget-roam-dir').  When that question fails (the
daemon cannot be reached, stays silent, is not at
`arcology-oracle-url', or answers with an error), or the daemon
serves other notes than it did when `arcology-oracle-roam-directory'
was set to its value, the request CALLBACK would make would fail
or be wrong: ERRBACK is called with the message instead, and
CALLBACK never runs.  ERRBACK defaults to `arcology-oracle--report'."
  (let ((url (arcology-oracle--base-url))
        (errback (or errback #'arcology-oracle--report)))
    (if (assoc url arcology-oracle--server-roam-dirs)
        (funcall callback (arcology-oracle--roam-dir))
      (arcology-oracle--json
       "GET" "/status"
       :callback (lambda (status)
                   (let* ((dir (alist-get 'roam_dir status))
                          (globs (alist-get 'exclude_globs status))
                          (stale (and arcology-oracle-roam-directory (stringp dir)
                                      (arcology-oracle--stale-setting url dir))))
                     (if stale
                         (funcall errback stale)
                       (when (and (stringp dir)
                                  (or arcology-oracle-roam-directory (file-directory-p dir)))
                         (arcology-oracle--remember-instance url (alist-get 'instance status) dir)
                         ;; Set: the daemon's own path may not be this machine's.
                         (push (cons url (and (file-directory-p dir) dir))
                               arcology-oracle--server-roam-dirs)
                         (setf (alist-get url arcology-oracle--server-exclude-globs nil nil #'equal)
                               (seq-filter #'stringp (append globs nil))))
                       (funcall callback (arcology-oracle--roam-dir)))))
       :errback errback))))

(defun arcology-oracle--relative-file (file dir)
  "Return FILE relative to DIR when it lies under DIR, else nil."
  (when (and file dir)
    (let ((file (file-truename file))
          (dir (file-name-as-directory (file-truename dir))))
      (when (string-prefix-p dir file)
        (substring file (length dir))))))

(defun arcology-oracle--unread-reason (rel)
  "Return why the daemon skips the file REL unread, or nil when it does not.
REL is relative to its roam directory.  The daemon leaves out files
in hidden folders and hidden files (a name starting with a dot), and
those its `exclude_globs' match (as /status named them: unknown
before the daemon was asked), as its notes/files.py says."
  (cond
   ((seq-some (lambda (part) (string-prefix-p "." part))
              (split-string rel "/" t))
    "the daemon does not read hidden folders or files")
   ((seq-some (lambda (glob) (arcology-oracle--glob-matches-p glob rel))
              (cdr (assoc (arcology-oracle--base-url) arcology-oracle--server-exclude-globs)))
    "it matches the daemon's exclude_globs")))

(defun arcology-oracle--fnmatch-regexp (glob)
  "Return a regexp matching what Python's `fnmatchcase' matches with GLOB.
\"*\" is any text (a slash too), \"?\" one character, \"[...]\" a set
\(\"[!...]\" its complement); an unclosed \"[\" is itself."
  (let ((i 0) (n (length glob)) (out nil))
    (while (< i n)
      (let ((c (aref glob i)))
        (setq i (1+ i))
        (push (pcase c
                (?* "[^z-a]*")
                (?? "[^z-a]")
                (?\[ (let ((j i))
                       (when (and (< j n) (eq (aref glob j) ?!)) (setq j (1+ j)))
                       (when (and (< j n) (eq (aref glob j) ?\])) (setq j (1+ j)))
                       (while (and (< j n) (not (eq (aref glob j) ?\]))) (setq j (1+ j)))
                       (if (>= j n)
                           "\\["
                         (let ((set (substring glob i j)))
                           (setq i (1+ j))
                           (concat "[" (if (string-prefix-p "!" set) (concat "^" (substring set 1)) set)
                                   "]")))))
                (_ (regexp-quote (string c))))
              out)))
    (concat "\\`" (apply #'concat (nreverse out)) "\\'")))

(defun arcology-oracle--glob-matches-p (glob rel)
  "Return non-nil when the daemon's exclude GLOB matches the relative path REL.
As its notes/files.py: the whole path, or without a leading \"**/\",
or, for a GLOB without a slash, any one part of the path."
  (let ((case-fold-search nil)
        (glob (if (string-suffix-p "/" glob) (concat glob "*") glob)))
    (or (string-match-p (arcology-oracle--fnmatch-regexp glob) rel)
        (and (string-prefix-p "**/" glob)
             (string-match-p (arcology-oracle--fnmatch-regexp (substring glob 3)) rel))
        (and (not (string-search "/" glob))
             (seq-some (lambda (part) (string-match-p (arcology-oracle--fnmatch-regexp glob) part))
                       (split-string rel "/" t))))))

(defun arcology-oracle--among-notes (file what callback &optional need-dir errback asked)
  "Call CALLBACK with FILE relative to the daemon's roam directory, or say why not.
A FILE outside that directory is not among the daemon's notes (the
daemon neither indexes nor reads it): the echo area says so, that
\"FILE is not among the daemon's notes (not under DIR)\" followed
by WHAT (e.g. \": nothing to summarize\"), and CALLBACK is not
called.  With the directory unknown, CALLBACK gets nil; with
NEED-DIR, FILE is refused then too, its message saying so.  A FILE
of nil (a buffer without a file) gives CALLBACK nil at once.

The directory may first have to be asked for (see
`arcology-oracle--with-roam-dir', which calls ERRBACK when that
fails): CALLBACK then runs later, and a `user-error' it signals
there is shown in the echo area, as it would be at once.  Before
FILE is refused, a directory the daemon said once is asked again
\(ASKED non-nil: it was): the daemon may have been restarted on
other notes since."
  (if (null file)
      (funcall callback nil)
    (let ((now t))
      (arcology-oracle--with-roam-dir
       (lambda (roam-dir)
         (let ((rel (arcology-oracle--relative-file file roam-dir)))
           (cond
            ((and rel (arcology-oracle--unread-reason rel))
             (arcology-oracle--report
              (format "%s is not among the daemon's notes (%s)%s"
                      (file-name-nondirectory file) (arcology-oracle--unread-reason rel) what)))
            ((or rel (not (or roam-dir need-dir)))
             (if now
                 (funcall callback rel)
               (condition-case err
                   (funcall callback rel)
                 (user-error (message "%s" (error-message-string err))))))
            ((and (not asked) roam-dir (arcology-oracle--roam-dir-from-daemon-p))
             (arcology-oracle--forget-roam-dir (arcology-oracle--base-url))
             (arcology-oracle--among-notes file what callback need-dir errback t))
            (t (arcology-oracle--report
                (format "%s is not among the daemon's notes (%s)%s"
                        (file-name-nondirectory file)
                        (if roam-dir (concat "not under " (abbreviate-file-name roam-dir))
                          "its roam directory is not known")
                        what))))))
       errback)
      (setq now nil))))

;;; Org context

(defun arcology-oracle--title-text (title)
  "Return the Org TITLE (a heading's, or a #+title) as a reader sees it.
Links show their description; statistics cookies (\"[1/3]\",
\"[50%]\") go, as Org leaves them out of a heading's search string
and its links' descriptions; blanks in a row are one space."
  (string-trim
   (replace-regexp-in-string
    "[ \t]+" " "
    (replace-regexp-in-string "\\[[0-9]*\\(?:%\\|/[0-9]*\\)\\]" " "
                              (org-link-display-format (or title ""))))))

(defvar arcology-oracle--similar-source)
(defvar arcology-oracle--links-source)

(defun arcology-oracle--listed-note ()
  "Return the note buffer the list in the current buffer is about, or nil.
In the similar notes and the link suggestions, a question is about
that note, at the place it was read: the list's own text (scores,
titles) says nothing."
  (let ((source (cond ((derived-mode-p 'arcology-oracle-similar-buffer-mode)
                       (bound-and-true-p arcology-oracle--similar-source))
                      ((derived-mode-p 'arcology-oracle-links-mode)
                       (bound-and-true-p arcology-oracle--links-source)))))
    (and (buffer-live-p source) source)))

(defun arcology-oracle-save-listed-note ()
  "Save the note the list in the current buffer is about.
\\[save-buffer] in the similar notes or the link suggestions: point is
there after \\[arcology-oracle-suggest-links], whose \"save the note\"
made \\[save-buffer] ask where to save the list itself."
  (interactive)
  (let ((note (or (arcology-oracle--listed-note)
                  (arcology-oracle--user-error "This list is about no note open in Emacs"))))
    (with-current-buffer note (save-buffer))
    (message "Saved %s: %s asks again once the daemon has read it"
             (buffer-name note)
             (substitute-command-keys (if (derived-mode-p 'arcology-oracle-links-mode)
                                          "\\[arcology-oracle-links-refresh]"
                                        "\\[arcology-oracle-similar-refresh]")))))

(defun arcology-oracle-undo-in-listed-note (&optional arg)
  "Undo the last change of the note the list in the current buffer is about.
\\[undo] in the similar notes or the link suggestions, right after
\\[arcology-oracle-insert-link] there, takes the link out again, as in the
note: the list itself is read-only, and said \"Buffer is read-only\".
Repeated, it undoes further, as \\[undo] does in the note; ARG (the
prefix argument) is undo's too."
  (interactive "P")
  (arcology-oracle--undo-in-listed-note #'undo arg))

(defun arcology-oracle-undo-redo-in-listed-note (&optional arg)
  "Redo the last undone change of the note the list is about.
\[undo-redo] in the similar notes or the link suggestions, as
`arcology-oracle-undo-in-listed-note' undoes there; ARG as
`undo-redo''s."
  (interactive "p")
  (arcology-oracle--undo-in-listed-note #'undo-redo arg))

(defun arcology-oracle-undo-only-in-listed-note (&optional arg)
  "Undo, without redoing, the last change of the note the list is about.
`undo-only' in the similar notes or the link suggestions, as
`arcology-oracle-undo-in-listed-note' undoes there; ARG as
`undo-only''s."
  (interactive "p")
  (arcology-oracle--undo-in-listed-note #'undo-only arg))

(defun arcology-oracle--undo-in-listed-note (command arg)
  "Call COMMAND with ARG in the note the list in the current buffer is about.
In the window the note was read in last, else in its buffer."
  (let* ((note (or (arcology-oracle--listed-note)
                   (arcology-oracle--user-error "This list is about no note open in Emacs")))
         (window (arcology-oracle--last-window-of note)))
    (if window
        (with-selected-window window (funcall command arg))
      (with-current-buffer note (funcall command arg)))))

(defun arcology-oracle--last-window-of (buffer)
  "Return the window showing BUFFER that was used last, or nil.
With the note in two windows, the one the user read it in: the
list follows that one."
  (car (sort (get-buffer-window-list buffer nil t)
             (lambda (a b) (> (window-use-time a) (window-use-time b))))))

(defun arcology-oracle--in-listed-note (function)
  "Call FUNCTION in the note the list in the current buffer is about.
At the place the note was read (the point of its window used last).  Return
non-nil when the current buffer is such a list, nil (FUNCTION not
called) otherwise; see `arcology-oracle--listed-note'.  A list whose
note was killed is refused."
  (if-let ((note (arcology-oracle--listed-note)))
      (progn
        (with-current-buffer note
          (save-excursion
            (when-let ((window (arcology-oracle--last-window-of note)))
              (goto-char (window-point window)))
            (funcall function)))
        t)
    (arcology-oracle--refuse-list-without-note)))

(defun arcology-oracle--refuse-list-without-note ()
  "Signal a `user-error' in a list whose note was killed, else return nil.
The list's own text (scores, titles) is no note to ask about.  A
command that prompts calls this first: the question typed would be
refused after."
  (when (and (derived-mode-p 'arcology-oracle-similar-buffer-mode 'arcology-oracle-links-mode)
             (not (arcology-oracle--listed-note)))
    (arcology-oracle--user-error "The note this list is about is no longer open in Emacs: ask from a note")))

(defun arcology-oracle--visited-file ()
  "Return the file the current buffer visits, or nil.
An indirect buffer (\\[clone-indirect-buffer], to read a subtree
alone) visits its base buffer's file: it shows that file's text."
  (or buffer-file-name
      (and (buffer-base-buffer) (buffer-file-name (buffer-base-buffer)))))

;; A buffer whose file is gone but was read from it, or saved to it, knows the file's
;; time; a new file never saved knows none (`visited-file-modtime' is -1 there, 0 with no
;; file at all).
(defun arcology-oracle--missing-file-error (file unsaved)
  "Signal why FILE, which the current buffer visits, is not on disk.
A buffer read from FILE or saved to it was moved or deleted behind
Emacs's back (`mv' in a shell): saving it would write the old file
again, beside the moved one and with its IDs, so the error says to
visit the note where it is now.  A buffer never saved gets UNSAVED,
a format string given FILE's name."
  (let ((name (file-name-nondirectory file)))
    (if (with-current-buffer (or (buffer-base-buffer) (current-buffer))
          (memql (visited-file-modtime) '(0 -1)))
        (arcology-oracle--user-error unsaved name)
      (arcology-oracle--user-error
       "%s is no longer on disk (moved or deleted): visit the note where it is now" name))))

(defun arcology-oracle--refuse-without-file (why)
  "Signal a `user-error' when the current buffer visits no file.
Such a buffer (\\[switch-to-buffer] to a new name) was never read by
the daemon, whatever :ID: it holds: the message asks to save it among
the notes, then says WHY (\"suggestions are for a note as saved\")."
  (unless (arcology-oracle--visited-file)
    (arcology-oracle--user-error "Save %s among your notes first (%s): it has no file, and %s"
                                 (buffer-name) (substitute-command-keys "\\[write-file]") why)))

(defun arcology-oracle--file-title ()
  "Return the title of the current buffer's note, as the daemon titles a file.
That is its #+title, else its file's name (an indirect buffer's is its
base buffer's), else the buffer's name."
  (save-restriction
    (widen)
    (or (cadr (assoc "TITLE" (org-collect-keywords '("TITLE"))))
        (when-let ((file (arcology-oracle--visited-file))) (file-name-base file))
        (buffer-name))))

(defun arcology-oracle--heading-start ()
  "Return the start of the heading at point, or `point-min' before the first."
  (save-excursion
    (if (org-before-first-heading-p)
        (point-min)
      (org-back-to-heading t)
      (point))))

(defun arcology-oracle--heading-context ()
  "Describe the heading at point as a plist.
Keys: :start (position), :line (1-based, ignoring narrowing),
:title, :olp (ancestor titles), :text (the heading and its body,
without sub-headings), :node-id (the ID of the nearest
enclosing org-roam node, possibly a file-level one), :own-id (the
heading's own ID, or the file's before the first heading) and :node-ids
\(the IDs of every enclosing node, the file's included)."
  (save-excursion
    (save-restriction
      (widen)
      (let* ((start (arcology-oracle--heading-start))
             ;; Before the first heading: the file's own part.  Not a file's
             ;; first line that is a heading, with point in its body.
             (before-first (save-excursion (goto-char start) (not (org-at-heading-p))))
             (title (if before-first
                        (arcology-oracle--file-title)
                      (goto-char start)
                      (org-get-heading t t t t)))
             (olp (unless before-first
                    (goto-char start)
                    (org-get-outline-path)))
             (end (progn (goto-char start)
                         (if (org-at-heading-p) (end-of-line) (goto-char (point-min)))
                         (if (re-search-forward org-outline-regexp-bol nil t)
                             (match-beginning 0)
                           (point-max)))))
        (goto-char start)
        (list :start start
              :line (line-number-at-pos start t)
              :title (substring-no-properties (or title ""))
              :olp (mapcar #'substring-no-properties olp)
              :text (buffer-substring-no-properties start (min end (+ start 8000)))
              :node-id (org-entry-get nil "ID" t)
              :own-id (org-entry-get nil "ID")
              :node-ids (arcology-oracle--enclosing-ids))))))

(defun arcology-oracle--enclosing-ids ()
  "Return the IDs of the heading at point, its ancestors and its file."
  (save-excursion
    (let ((ids (list (org-entry-get (point-min) "ID"))))
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (push (org-entry-get nil "ID") ids)
        (while (org-up-heading-safe)
          (push (org-entry-get nil "ID") ids)))
      (delq nil ids))))

(defvar arcology-oracle-answer-property)

(defun arcology-oracle--answer-heading-p ()
  "Return non-nil when point is under one of the oracle's answers."
  (unless (org-before-first-heading-p)
    (or (org-entry-get nil arcology-oracle-answer-property)
        (arcology-oracle--oracle-role-p (org-entry-get nil "ROLE")))))

(defun arcology-oracle--oracle-role-p (role)
  "Return non-nil when ROLE, a :ROLE: value or nil, names the assistant."
  (member (downcase (string-trim (or role "")))
          '("oracle" "assistant" "ai" "model" "bot" "answer")))

(defun arcology-oracle--node-is-answer-p ()
  "Return non-nil when the org-roam node around point is an oracle's answer.
The node of `arcology-oracle--node-at-point': its heading, where
`arcology-oracle--answer-heading-p' says so (an answer kept by
\\[arcology-oracle-memorize] from the answers buffer is its own node);
the file's node, where the file's drawer has an assistant's :ROLE:."
  (save-excursion
    (save-restriction
      (widen)
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (while (and (not (org-entry-get nil "ID")) (org-up-heading-safe))))
      (if (and (not (org-before-first-heading-p)) (org-entry-get nil "ID"))
          (arcology-oracle--answer-heading-p)
        ;; The file's node: its drawer says whose words it holds.
        (arcology-oracle--oracle-role-p (org-entry-get (point-min) "ROLE"))))))

(defun arcology-oracle--node-heading ()
  "Return the start of the nearest heading with an ID at point or above it.
Nil when there is none: the org-roam node around point is then the
file's, if it has an ID."
  (save-excursion
    (save-restriction
      (widen)
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (let ((found nil))
          (while (and (not (setq found (and (org-entry-get nil "ID") (point))))
                      (org-up-heading-safe)))
          found)))))

(defun arcology-oracle--node-at-point ()
  "Return (ID . TITLE) of the org-roam node around point, or nil.
The nearest heading with an ID, at point or above it, else the
file's node (titled by #+title, else the file's name)."
  (save-excursion
    (save-restriction
      (widen)
      (if-let ((at (arcology-oracle--node-heading)))
          (progn (goto-char at)
                 (cons (org-entry-get nil "ID") (org-get-heading t t t t)))
        (when-let ((id (org-entry-get (point-min) "ID")))
          (cons id (arcology-oracle--file-title)))))))

(defun arcology-oracle--node-private-p ()
  "Return non-nil when the org-roam node around point is private.
The node is the one `arcology-oracle--node-at-point' finds; it is
private where its heading (the file's start, for the file's node)
is, by `arcology-oracle--private-here-p'.  The daemon never
indexes it: asking about it could only fail."
  (save-excursion
    (save-restriction
      (widen)
      (arcology-oracle--private-here-p (or (arcology-oracle--node-heading) (point-min))))))

(defun arcology-oracle--path (result)
  "Return the outline path of RESULT as a list of strings, its note's title first.
The title, the ancestors (`olp') and the heading, each once: the
daemon's `olp' may start with the title, and a note's own heading
is its title."
  (let ((out nil))
    (dolist (part (append (list (alist-get 'title result))
                          (alist-get 'olp result)
                          (list (alist-get 'heading result))))
      (when (stringp part)
        (let ((part (arcology-oracle--title-text part)))
          (unless (or (string-empty-p part) (equal part (car out)))
            (push part out)))))
    (nreverse out)))

(defun arcology-oracle--outline (result)
  "Return the outline path of RESULT, its note's title first, as one string."
  (mapconcat #'identity (arcology-oracle--path result) " › "))

(defun arcology-oracle--one-line (text width)
  "Return TEXT on one line, cut to WIDTH columns."
  (truncate-string-to-width
   (string-trim (replace-regexp-in-string "[ \t\n\r]+" " " (or text ""))) width nil nil "…"))

(defun arcology-oracle--plain-text (text)
  "Return the snippet TEXT as a reader sees it, on one line.
The daemon's snippet is one line: the note's lines it has read and
joined (its answers/snippets.py: drawers, keyword lines, table
rules and the like left out, a table row's cells joined by \" · \",
Org's escape comma dropped), never read as Org lines again, so one
that starts with \"#+\" or \"* \" is text as written (a captured
\",#+title: ...\" line, a list item).  A TEXT of several lines is
Org text: drawers (:PROPERTIES:, :LOGBOOK: ...), planning lines,
keyword and block delimiter lines, table rules and comments are
dropped, table rows keep their cells.  Both ways links show their
description and emphasis markers (=code=, ~code~, *bold*, /italic/,
+strike+, _under_) go."
  (let* ((text (or text ""))
         (lines (unless (string-match-p "\n" text) (list text)))
         (drawer nil))
    (dolist (line (unless lines (split-string text "\n")))
      (cond
       (drawer (when (string-match-p "\\`[ \t]*:END:[ \t]*\\'" line) (setq drawer nil)))
       ((string-match-p "\\`[ \t]*:[[:alnum:]_-]+:[ \t]*\\'" line) (setq drawer t))
       ((string-match-p "\\`[ \t]*\\(#\\+\\|# \\|#\\'\\|\\(SCHEDULED\\|DEADLINE\\|CLOSED\\):\\)" line))
       ((string-match-p "\\`[ \t]*|[-+]" line))
       ((string-match-p "\\`[ \t]*|" line)
        (push (mapconcat #'string-trim
                         (split-string (string-trim line "[ \t|]+" "[ \t|]+") "|") " · ")
              lines))
       ((string-match-p "\\`\\*+ " line))
       (t (push line lines))))
    (let ((text (org-link-display-format (mapconcat #'identity (nreverse lines) " "))))
      (setq text (replace-regexp-in-string
                  "\\(?:^\\|[[:space:](\"'{]\\)\\([=~*/+_]\\)\\([^ \t\n]\\(?:.*?[^ \t\n]\\)??\\)\\1\\(?:[[:space:]).,;:!?'\"}]\\|$\\)"
                  (lambda (m) (replace-regexp-in-string
                               (regexp-quote (concat (match-string 1 m) (match-string 2 m) (match-string 1 m)))
                               (match-string 2 m) m t t))
                  text t t))
      (string-trim (replace-regexp-in-string "[ \t\r]+" " " text)))))

(defun arcology-oracle--insert-message (text &optional indent face)
  "Insert TEXT in FACE (default `shadow'), filled to the width of its window.
INDENT, a string, starts every line.  Messages (an error from the
daemon, say) and titles are read whole, not cut at the window's edge."
  (let ((start (point))
        (width (if-let ((window (get-buffer-window (current-buffer) t)))
                   (window-width window)
                 60)))
    (insert (propertize (concat (or indent "") text) 'face (or face 'shadow)) "\n")
    ;; As narrow as the window: a side window on a 60-column terminal is 18
    ;; columns, and a line filled wider is cut at its edge.
    (let ((fill-column (max 8 (- width 2)))
          (fill-prefix indent))
      (fill-region start (point)))))

(defun arcology-oracle--linked-p (result buffer)
  "Return non-nil when the note of RESULT is already linked from BUFFER.
The daemon says so with `linked'; else BUFFER's text is searched
for an id: link to the note or to its heading.  BUFFER may also be
a list of the IDs linked."
  (or (eq (alist-get 'linked result) t)
      (and (consp buffer)
           (or (member (alist-get 'node_id result) buffer)
               (member (alist-get 'heading_id result) buffer)))
      (and (bufferp buffer) (buffer-live-p buffer)
           (with-current-buffer buffer
             (save-excursion
               (save-restriction
                 (widen)
                 (seq-some (lambda (id)
                             (and (stringp id)
                                  (progn (goto-char (point-min))
                                         (search-forward (concat "[[id:" id "]") nil t))))
                           (list (alist-get 'node_id result) (alist-get 'heading_id result)))))))))

(defun arcology-oracle--result-tags (result buffer &optional backlinks)
  "Return the tags of RESULT as one string (may be empty), with a leading space.
\"linked\" when BUFFER links to its note already (see
`arcology-oracle--linked-p'), \"links here\" when its node is among
BACKLINKS (the IDs of the nodes linking to the note being read) or
the daemon says it links here,
\"linked both ways\" for both, \"this note\" for a heading of the note
being read, \"oracle\" or \"conversation\" for answers and turns,
\"weak\" for a low score (see `arcology-oracle-weak-score')."
  (let* ((out (arcology-oracle--linked-p result buffer))
         (in (or (member (alist-get 'node_id result) backlinks)
                 ;; The daemon's reading: org-roam credits a link in a heading's
                 ;; drawer (a capture's :SOURCE:) to the file, not to that heading.
                 (eq (alist-get 'links_here result) t)))
         (tags (delq nil (list (cond ((and out in) "linked both ways")
                                     (out "linked")
                                     (in "links here"))
                               (when (eq (alist-get 'same_file result) t) "this note")
                               (pcase (alist-get 'role result)
                                 ("oracle" "oracle")
                                 ("conversation" "conversation"))
                               (when (arcology-oracle--weak-p result) "weak")))))
    (if tags (concat " " (propertize (mapconcat #'identity tags " ") 'face 'arcology-oracle-tag)) "")))

(declare-function org-roam-db-query "ext:org-roam-db" (sql &rest args))

(defun arcology-oracle--roam-backlinks (id)
  "Return the IDs of the nodes linking to node ID, from org-roam's database.
Nil when org-roam is not loaded; never signals."
  (when (and id (fboundp 'org-roam-db-query))
    (ignore-errors
      (mapcar #'car (org-roam-db-query
                     [:select :distinct [source] :from links
                      :where (= dest $s1) :and (= type "id")]
                     id)))))

(defun arcology-oracle--score-text (result)
  "Return RESULT's score as text, \"0.97\", or \"    \" when it has none.
Dimmed below the daemon's cut-off and when weak (see
`arcology-oracle--weak-p')."
  (let ((score (alist-get 'score result)))
    (propertize (if (numberp score) (format "%.2f" score) "    ")
                'face (if (or (eq (alist-get 'below_cutoff result) t) (arcology-oracle--weak-p result))
                          'shadow
                        'arcology-oracle-score))))

(defun arcology-oracle--weak-p (result)
  "Return non-nil when RESULT scores under `arcology-oracle-weak-score'.
Only for a calibrated score (see `arcology-oracle--results-of') above
the daemon's cut-off: the rest are folded away as it is."
  (let ((score (alist-get 'score result)))
    (and (numberp score)
         (< score arcology-oracle-weak-score)
         (not (eq (alist-get 'below_cutoff result) t))
         (not (alist-get 'keyword-score result)))))

(defun arcology-oracle--results-of (answer key)
  "Return the results under KEY of the daemon's ANSWER.
In keyword mode (no vectors yet) their scores are the keyword match's,
not a chance of a link: each is marked `keyword-score', never weak."
  (let ((results (alist-get key answer)))
    (if (equal (alist-get 'mode answer) "keyword")
        (mapcar (lambda (r) (cons '(keyword-score . t) r)) results)
      results)))

(defun arcology-oracle--split-cutoff (results)
  "Return (ABOVE . BELOW): RESULTS above the daemon's relevance cut, and below it."
  (let (above below)
    (dolist (r results)
      (if (eq (alist-get 'below_cutoff r) t) (push r below) (push r above)))
    (cons (nreverse above) (nreverse below))))

(defun arcology-oracle--below-cut-listed-p ()
  "Return non-nil when the list in the current buffer has a relevance cut line.
That line (text property `arcology-oracle-more') is there only when
some of the daemon's results are below its cut."
  (text-property-any (point-min) (point-max) 'arcology-oracle-more t))

(defun arcology-oracle--nothing-below-cut ()
  "Say that no result of the list is below the relevance cut.
The key showing them in a list without any showed or folded
nothing, and said nothing."
  (message "Nothing below the relevance cut"))

(defun arcology-oracle--snippet (result)
  "Return RESULT's snippet as plain one-line text, or nil when it is empty.
A snippet that only repeats the heading or the title is empty too."
  (let ((text (arcology-oracle--plain-text (alist-get 'snippet result))))
    (unless (or (string-empty-p text)
                (member (downcase (string-trim-right text "[ .…]+"))
                        (mapcar (lambda (s) (downcase (org-link-display-format s)))
                                (delq nil (list (alist-get 'heading result)
                                                (alist-get 'title result))))))
      text)))

;;; Windows

(defun arcology-oracle--delete-other-windows (window)
  "Show WINDOW's buffer alone in its frame, for \\[delete-other-windows].
The `delete-other-windows' parameter of the package's side windows:
Emacs cannot make a side window the only window, so the buffer
moves to the frame's main window and every other window goes;
\\[quit-window] there brings back the note that was shown."
  (let ((buffer (window-buffer window))
        (main (window-main-window (window-frame window))))
    (select-window main)
    (delete-other-windows main)
    (switch-to-buffer buffer nil t)
    nil))

(defun arcology-oracle--beside-selected (buffer action)
  "Return ACTION, made not to show BUFFER in the selected window.
A side window ACTION would use again (its side and slot) that is
selected and shows another buffer is the list or answer being read:
\\[arcology-oracle-ask] in the link suggestions put the answers in
their place, the suggestions gone and the answers selected.  The
next slot of that side is used instead, the two side by side, the
list still selected."
  (let* ((window (selected-window))
         (side (window-parameter window 'window-side))
         (functions (car action))
         (alist (cdr action)))
    (if (and side
             (not (eq (window-buffer window) buffer))
             (memq #'display-buffer-in-side-window
                   (if (functionp functions) (list functions) functions))
             (eq side (alist-get 'side alist 'bottom))
             (eql (window-parameter window 'window-slot) (alist-get 'slot alist 0)))
        (cons functions (cons (cons 'slot (1+ (or (window-parameter window 'window-slot) 0))) alist))
      action)))

(defun arcology-oracle--display (buffer action &optional select)
  "Display BUFFER with the `display-buffer' ACTION; return its window.
A window of the selected frame already showing BUFFER is used
again.  SELECT non-nil selects the window too (the user goes to
that list); without it, a selected side window is not made to show
BUFFER in place of its own (see `arcology-oracle--beside-selected').
A side window so made answers \\[delete-other-windows] with
`arcology-oracle--delete-other-windows'."
  (let* ((action (if select action (arcology-oracle--beside-selected buffer action)))
         (functions (car action))
         (window (display-buffer
                  buffer (cons (cons #'display-buffer-reuse-window
                                     (if (functionp functions) (list functions) functions))
                               (cdr action)))))
    (when (and window (window-parameter window 'window-side))
      (set-window-parameter window 'delete-other-windows #'arcology-oracle--delete-other-windows))
    (when (and window select) (select-window window))
    window))

;;; Visiting results

(defun arcology-oracle--roam-node-location (id)
  "Return (FILE . POSITION) of the org-roam node ID, or nil.
Uses org-roam's database when org-roam is loaded; never signals.
Nil when that file is gone (deleted or moved outside Emacs, which
org-roam's database does not see): visiting it made an empty new
file."
  (when (and id (fboundp 'org-roam-node-from-id))
    (condition-case nil
        (when-let* ((node (org-roam-node-from-id id))
                    (file (org-roam-node-file node)))
          (when (or (file-exists-p file) (find-buffer-visiting file))
            (cons file (or (org-roam-node-point node) 1))))
      (error nil))))

(defun arcology-oracle--at-id (id)
  "Move to the entry with ID when point is not at it.
org-roam's database keeps a node's position as of its last sync: a
note edited since (a line added above the node) puts it elsewhere,
so the entry is looked for by its :ID: in the buffer."
  (when (and id (derived-mode-p 'org-mode)
             (not (equal (ignore-errors (org-entry-get nil "ID")) id)))
    (when-let ((pos (org-find-entry-with-id id)))
      (goto-char pos))))

(defun arcology-oracle--file-location (result)
  "Return (FILE . LINE) of RESULT when its file exists here, else nil."
  (when-let* ((dir (arcology-oracle--roam-dir))
              (rel (alist-get 'file result))
              (file (expand-file-name rel dir)))
    (when (file-exists-p file)
      (cons file (or (alist-get 'line result) 1)))))

(defun arcology-oracle--source-link (source)
  "Return an org link to SOURCE (a source or result of the daemon)."
  (let* ((title (arcology-oracle--title-text (or (alist-get 'title source) "?")))
         (heading (and (stringp (alist-get 'heading source))
                       (arcology-oracle--title-text (alist-get 'heading source))))
         (label (if (and heading (not (equal heading title)))
                    (concat title " › " heading)
                  title))
         (id (or (alist-get 'heading_id source) (alist-get 'node_id source)))
         (file (car (arcology-oracle--file-location source))))
    (org-link-make-string
     (cond (id (concat "id:" id))
           (file (format "file:%s::%d" file (or (alist-get 'line source) 1)))
           (t (concat "file:" (or (alist-get 'file source) ""))))
     (replace-regexp-in-string "[][]" "" label))))

(defun arcology-oracle--goto-heading (line heading)
  "Go to LINE, or to the heading titled HEADING nearest to it.
The index may lag behind the file by a few lines."
  (widen)
  (goto-char (point-min))
  (forward-line (1- line))
  (when (and heading (> line 1) (derived-mode-p 'org-mode)
             (not (and (org-at-heading-p)
                       (equal (org-get-heading t t t t) heading))))
    (let ((target (point))
          (re (format org-complex-heading-regexp-format (regexp-quote heading)))
          best)
      (goto-char (point-min))
      (while (re-search-forward re nil t)
        (let ((pos (line-beginning-position)))
          (when (or (not best) (< (abs (- pos target)) (abs (- best target))))
            (setq best pos))))
      (goto-char (or best target)))))

(defun arcology-oracle--visit (result &optional asked)
  "Visit the note of RESULT (a search or similar result, or a source).
Tries, in order: the heading's own ID through org-roam, the file
and line under the roam directory, the enclosing node's ID
through org-roam, then `org-id-find' when org-id's locations are
loaded.  A file not under the directory the daemon said is looked
for again once the daemon has said it again (ASKED non-nil: it
has), as `arcology-oracle--among-notes' does."
  (let* ((heading-id (alist-get 'heading_id result))
         (node-id (alist-get 'node_id result))
         (from-list (or (window-parameter nil 'window-side)
                        (derived-mode-p 'arcology-oracle-similar-buffer-mode 'arcology-oracle-answers-mode
                                       'org-roam-mode)))
         location line id)
    (cond
     ((setq location (arcology-oracle--roam-node-location heading-id))
      (setq id heading-id))
     ((setq location (arcology-oracle--file-location result))
      (setq line (cdr location)))
     ((setq location (arcology-oracle--roam-node-location node-id))
      (setq id node-id))
     ;; Only when org-id has its locations loaded: loading them may scan files.
     ((let ((found (and (or heading-id node-id)
                        (bound-and-true-p org-id-locations)
                        (ignore-errors (org-id-find (or heading-id node-id))))))
        (setq location found)))
     ((and (alist-get 'file result) (not asked) (arcology-oracle--roam-dir-from-daemon-p))
      (arcology-oracle--visit-asking-again result))
     ((and (alist-get 'file result) (arcology-oracle--roam-dir)
           (file-directory-p (arcology-oracle--roam-dir)))
      (arcology-oracle--user-error "%s is not in %s any more: deleted or moved since it was listed"
                                   (alist-get 'file result) (arcology-oracle--roam-dir)))
     (t (arcology-oracle--user-error "Cannot find %s here: is `arcology-oracle-roam-directory' right?"
                    (or (alist-get 'file result) (alist-get 'title result)))))
    (when-let ((buffer (and location (find-file-noselect (car location)))))
      (if from-list
          (pop-to-buffer buffer '((display-buffer-reuse-window display-buffer-use-some-window) (inhibit-same-window . t)))
        (pop-to-buffer-same-window buffer))
      (if line
          ;; A link suggestion's `heading' is an object: where the link goes
          ;; in the note being read, not a heading of the note visited.
          (arcology-oracle--goto-heading line (let ((heading (alist-get 'heading result)))
                                                (and (stringp heading) heading)))
        (widen)
        (goto-char (cdr location))
        (arcology-oracle--at-id id))
      (when (derived-mode-p 'org-mode) (org-show-context))
      (recenter 0))))

(defun arcology-oracle--visit-asking-again (result)
  "Visit RESULT once the daemon has said again where its notes are.
From the window selected now; a `user-error' then is shown in the
echo area."
  (let ((window (selected-window)))
    (arcology-oracle--forget-roam-dir (arcology-oracle--base-url))
    (arcology-oracle--with-roam-dir
     (lambda (_roam-dir)
       (when (window-live-p window) (select-window window))
       (condition-case err
           (arcology-oracle--visit result t)
         (user-error (message "%s" (error-message-string err))))))))

(defun arcology-oracle--open-source-at-point ()
  "Visit the source whose link is at point, as `arcology-oracle--visit' does.
For `org-open-at-point-functions' in the answers buffers: a source
is found by its heading's line when org-roam does not know its ID
yet, and opens at that heading, not at its note's first line.
Return non-nil when there was a source at point."
  (when-let ((source (get-text-property (point) 'arcology-oracle-source)))
    (arcology-oracle--visit source)
    t))

(defun arcology-oracle-visit-result (&optional event)
  "Visit the note listed at point (similar notes or the org-roam buffer).
From a mouse click, EVENT, the note clicked: the middle button, or
the left one on an entry, as on a link (see
`mouse-1-click-follows-link')."
  (interactive (list last-nonmenu-event))
  (when (mouse-event-p event)
    (mouse-set-point event))
  (let ((result (get-text-property (point) 'arcology-oracle-result)))
    (unless result (arcology-oracle--user-error "No note at point"))
    (arcology-oracle--visit result)))

;;; Sources cited by a conversation's answers

(defun arcology-oracle--cited-source-at-point ()
  "Return the source cited on the `- [N] ...' line at point, or nil.
An answer the daemon writes into a conversation lists its sources as
plain text (so a cited note gains no org-roam backlink) and keeps
them, in citation order, in its `SOURCES' property: `ID::REL::LINE'
for a heading of a node (opened at that heading, and before org-roam
knows the ID), `file:REL::LINE' for a heading without one, or, in
answers written before, a bare ID.  ID and REL are percent-encoded.
The heading is looked for near LINE by its title, the end of the
line's `Title: Heading'.  In the answers buffers a `- [N]' line holds
its source as a link.  The result is a source as
`arcology-oracle--visit' takes it."
  (save-excursion
    (beginning-of-line)
    (when (looking-at "[ \t]*- \\[\\([0-9]+\\)\\] ")
      (let ((n (string-to-number (match-string 1)))
            (label (string-replace "\u200b" "" (buffer-substring-no-properties (match-end 0) (line-end-position)))))
        (or (let ((pos (text-property-not-all (point) (line-end-position) 'arcology-oracle-source nil)))
              (and pos (get-text-property pos 'arcology-oracle-source)))
            (when (and (> n 0) (derived-mode-p 'org-mode))
              (let ((source (arcology-oracle--cited-target
                             (nth (1- n) (split-string (or (org-entry-get nil "SOURCES") ""))))))
                ;; "Title: Heading" (or the title alone): the heading to look for near
                ;; the line, which moves when the note is edited.
                (if (and source (alist-get 'line source))
                    `((heading . ,(if (string-match ".*: \\(.+\\)\\'" label) (match-string 1 label) label))
                      ,@source)
                  source))))))))

(defun arcology-oracle--cited-target (target)
  "Return TARGET, one word of a `SOURCES' property, as a source; nil for nil."
  (cl-flet ((unhex (rel) (decode-coding-string (url-unhex-string rel) 'utf-8)))
    (cond ((null target) nil)
          ((string-match "\\`file:\\(.+\\)::\\([0-9]+\\)\\'" target)
           (let ((rel (match-string 1 target)) (line (match-string 2 target)))
             `((file . ,(unhex rel)) (line . ,(string-to-number line)))))
          ((string-match "\\`\\(.+?\\)::\\(.+\\)::\\([0-9]+\\)\\'" target)
           (let ((id (match-string 1 target)) (rel (match-string 2 target)) (line (match-string 3 target)))
             `((node_id . ,(unhex id)) (file . ,(unhex rel)) (line . ,(string-to-number line)))))
          (t `((heading_id . ,target) (node_id . ,target))))))

(defun arcology-oracle--open-cited-source ()
  "Visit the source cited on the line at point; non-nil when there was one.
For `org-open-at-point-functions', so that \\[org-open-at-point] on a
line of an answer's `Sources:' list opens that source."
  (when-let ((source (arcology-oracle--cited-source-at-point)))
    (arcology-oracle--visit source)
    t))

;;;###autoload
(defun arcology-oracle-visit-cited-source ()
  "Visit the source cited on the line at point of a conversation's answer."
  (interactive)
  (unless (arcology-oracle--open-cited-source)
    (arcology-oracle--user-error "No cited source on this line (a `- [N]' line of an answer's Sources:)")))

(provide 'arcology-oracle-notes)

;;; arcology-oracle-notes.el ends here
