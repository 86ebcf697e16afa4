# Earlier addresses of resources now declared with for_each: deployments made with an earlier
# version of this module keep their alarms, secrets (with the users file an operator wrote) and
# Function URL permissions instead of destroying and recreating them. Needs Terraform >= 1.1
# (versions.tf asks for more).

moved {
  from = aws_cloudwatch_metric_alarm.url_5xx
  to   = aws_cloudwatch_metric_alarm.registry["5xx"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles
  to   = aws_cloudwatch_metric_alarm.registry["throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.duration_p99
  to   = aws_cloudwatch_metric_alarm.registry["duration-p99"]
}

moved {
  from = aws_cloudwatch_metric_alarm.dynamodb_throttles
  to   = aws_cloudwatch_metric_alarm.registry["dynamodb-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.churn
  to   = aws_cloudwatch_metric_alarm.registry["churn"]
}

moved {
  from = aws_cloudwatch_metric_alarm.id_growth
  to   = aws_cloudwatch_metric_alarm.registry["id-growth"]
}

moved {
  from = aws_secretsmanager_secret.users[0]
  to   = aws_secretsmanager_secret.auth["users"]
}

moved {
  from = aws_secretsmanager_secret.jwks[0]
  to   = aws_secretsmanager_secret.auth["jwks"]
}

moved {
  from = aws_lambda_permission.url_public[0]
  to   = aws_lambda_permission.url["RegistryPublicUrl"]
}

moved {
  from = aws_lambda_permission.url_public_invoke[0]
  to   = aws_lambda_permission.url["RegistryPublicUrlInvoke"]
}

moved {
  from = aws_lambda_permission.cloudfront_url[0]
  to   = aws_lambda_permission.url["RegistryCloudFrontUrl"]
}

moved {
  from = aws_lambda_permission.cloudfront_url_invoke[0]
  to   = aws_lambda_permission.url["RegistryCloudFrontUrlInvoke"]
}
