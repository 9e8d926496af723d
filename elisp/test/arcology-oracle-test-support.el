;;; arcology-oracle-test-support.el --- Helpers shared by the arcology-oracle ERT files -*- lexical-binding: t -*-

;;; Commentary:

;; Waiting on events: every test that needs something to happen pumps
;; the event loop until a predicate holds, and fails after a deadline.
;; No test sleeps and then asserts.

;;; Code:

(require 'ert)
(require 'cl-lib)

(defun arcology-oracle-test--wait (predicate &optional timeout what)
  "Process events until PREDICATE returns non-nil; return its value.
Fail after TIMEOUT seconds (default 20), naming WHAT."
  (let ((deadline (+ (float-time) (or timeout 20)))
        value)
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (ert-fail (format "timed out waiting for %s" (or what predicate))))))

(defun arcology-oracle-test--connections ()
  "Return the package's network connections still open."
  (cl-remove-if-not (lambda (proc)
                      (and (string-prefix-p "arcology-oracle" (process-name proc))
                           (process-live-p proc)))
                    (process-list)))

(defun arcology-oracle-test--settled (&optional timeout)
  "Wait until the package has no connection open: every answer arrived or failed.
Callbacks run from the connections' filters and sentinels, so once
the last connection is gone, all of them have run.  Fail after
TIMEOUT seconds (default 20)."
  (arcology-oracle-test--wait (lambda () (null (arcology-oracle-test--connections)))
                              timeout "every connection to close"))

(defvar org-roam-db--connection)
(declare-function org-roam-db--close-all "org-roam-db" ())
(declare-function org-roam-db-sync "org-roam-db" (&optional force))
(declare-function emacsql-process "emacsql" (connection))

(defun arcology-oracle-test--roam-db-close ()
  "Close org-roam's database connections; return once their sqlite has exited.
Closing one only ends sqlite's input, and until sqlite has exited
org-roam takes the connection for live and reuses it (see
`arcology-oracle-test--roam-db-sync')."
  (let ((processes (mapcar #'emacsql-process (hash-table-values org-roam-db--connection))))
    (org-roam-db--close-all)
    (arcology-oracle-test--wait (lambda () (not (cl-some #'process-live-p processes)))
                                20 "org-roam's sqlite to exit")))

(defun arcology-oracle-test--roam-db-sync ()
  "Run `org-roam-db-sync' once org-roam's earlier connections are gone.
It closes the connection of `org-roam-directory' and at once opens
it again; on a busy machine sqlite had not exited yet, the sync sent
its queries to the dying connection and failed with \"Selecting
deleted buffer\" (a list's backlinks had opened it, see
`arcology-oracle--roam-backlinks')."
  (arcology-oracle-test--roam-db-close)
  (org-roam-db-sync))

(defmacro arcology-oracle-test--capturing-messages (var &rest body)
  "Run BODY with the messages it shows collected, newest first, in VAR."
  (declare (indent 1) (debug (symbolp body)))
  (let ((orig (make-symbol "orig")))
    `(let ((,var nil)
           (,orig (symbol-function 'message)))
       (cl-letf (((symbol-function 'message)
                  (lambda (format-string &rest args)
                    (when format-string
                      (push (apply #'format-message format-string args) ,var))
                    (apply ,orig format-string args))))
         ,@body))))

(provide 'arcology-oracle-test-support)

;;; arcology-oracle-test-support.el ends here
