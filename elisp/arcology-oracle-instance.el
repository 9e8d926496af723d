;;; arcology-oracle-instance.el --- Which daemon process arcology-oracle talks to -*- lexical-binding: t -*-

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

;; What is known of a daemon holds only as long as it is the same
;; process: the process (and the notes) its /status named are
;; remembered, and when it cannot be reached or a response comes from
;; another process, `arcology-oracle--unreachable-functions' forget
;; what the parts remembered of it.

;;; Code:

(require 'arcology-oracle)

(defvar arcology-oracle--unreachable-functions nil
  "Functions called with the base URL of a daemon that could not be reached.
What is remembered of that daemon may no longer hold when it comes
back: it may be another, started on other notes.  Also called when
a response comes from another daemon process than the one whose
/status was read (see `arcology-oracle--daemon-instances').")

(defvar arcology-oracle--daemon-instances nil
  "Alist of (URL . INSTANCE): the daemon process whose /status was read.
A response from another (X-Arcology-Oracle-Instance) is from a daemon
restarted since, maybe on other notes: what was known is forgotten.")

(defvar arcology-oracle--daemon-notes nil
  "Alist of (URL . DIRECTORY): the roam directory the daemon's /status named.
Sent with every request (X-Arcology-Oracle-Notes): a daemon restarted
on other notes before a response told Emacs so refuses it (HTTP
409) rather than read the request's paths as relative to its notes.")

(defun arcology-oracle--remember-instance (url instance notes)
  "Remember that what is known of the daemon at URL came from INSTANCE.
NOTES is the roam directory it named, as it wrote it."
  (arcology-oracle--forget-instance url)
  (when (stringp instance)
    (push (cons url instance) arcology-oracle--daemon-instances))
  (when (stringp notes)
    (push (cons url notes) arcology-oracle--daemon-notes)))

(defun arcology-oracle--forget-instance (url)
  "Forget which process the daemon at URL was, and its notes."
  (setq arcology-oracle--daemon-instances (assoc-delete-all url arcology-oracle--daemon-instances)
        arcology-oracle--daemon-notes (assoc-delete-all url arcology-oracle--daemon-notes)))

(add-hook 'arcology-oracle--unreachable-functions #'arcology-oracle--forget-instance)

(defun arcology-oracle--check-instance (url instance)
  "Forget what is known of the daemon at URL when INSTANCE is another process.
INSTANCE is what a response of it said (nil: an older daemon)."
  (let ((known (cdr (assoc url arcology-oracle--daemon-instances))))
    (when (and known instance (not (equal known instance)))
      (condition-case err
          (run-hook-with-args 'arcology-oracle--unreachable-functions url)
        (error (arcology-oracle--message "arcology-oracle: %s" (error-message-string err)))))))

(provide 'arcology-oracle-instance)

;;; arcology-oracle-instance.el ends here
