;;; arcology-oracle-roam-dir.el --- The daemon's roam directory as seen from this Emacs -*- lexical-binding: t -*-

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

;; Where the daemon's notes are in this Emacs: its roam directory and
;; `exclude_globs' (from its /status, or as set), and whether a file is
;; among the notes it reads.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'arcology-oracle-http)

(defvar org-roam-directory)

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

(defun arcology-oracle--unread-refusal (file roam-dir)
  "Return why nothing of a buffer visiting FILE may be sent, or nil.
A FILE under ROAM-DIR that the daemon never reads (see
`arcology-oracle--unread-reason': a hidden folder or file, its
`exclude_globs') holds text the daemon treats as private, as an old
version a sync tool keeps in .stversions: asking, conversing or
remembering from it is refused here first, and nothing is sent.
The message words it as `arcology-oracle--among-notes' does."
  (when-let* ((rel (arcology-oracle--relative-file file roam-dir))
              (reason (arcology-oracle--unread-reason rel)))
             (format "%s is not among the daemon's notes (%s): nothing was sent"
                     (file-name-nondirectory file) reason)))

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
                 (user-error (arcology-oracle--message "%s" (error-message-string err))))))
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

(provide 'arcology-oracle-roam-dir)

;;; arcology-oracle-roam-dir.el ends here
