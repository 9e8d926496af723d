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
